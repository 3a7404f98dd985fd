import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { type AccountsSandbox, startAccountsSandbox } from '../../sandbox/accounts-sandbox.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon } from '../support/recon-process.ts';

/**
 * `recon nightly --date D --account A` as an operator re-runs one account's night by hand (issue 25
 * §1): with TEMPORAL_ADDRESS unset it starts an embedded Temporal and a worker for the length of the
 * command, runs that account's night only, with its own credentials, and prints what it did.
 */
let sandbox: AccountsSandbox;
let h: DatabaseHandle;
const dir = mkdtempSync(join(tmpdir(), 'recon-nightly-embedded-'));
// The embedded Temporal keeps its database here; it must be reachable when the tests run as root.
chmodSync(dir, 0o755);

beforeAll(async () => {
  const history = { transactions: 120, from: '2026-03-01', to: '2026-03-10' };
  [sandbox, h] = await Promise.all([
    startAccountsSandbox({
      accounts: [
        { name: 'ca-main', seed: 'nightly-ca', sandbox: history },
        { name: 'us-main', seed: 'nightly-us', sandbox: history },
      ],
    }),
    createTestDatabase(),
  ]);
});
afterAll(async () => {
  await sandbox?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('recon nightly --account on an embedded Temporal', () => {
  it("runs one account's night in the foreground and prints what it loaded and followed up", async () => {
    const file = sandbox.accountsFile();
    writeFileSync(join(dir, 'accounts.json'), file.json);
    const run = await recon(
      h.connectionString,
      ['nightly', '--date', '2026-03-05', '--account', 'us-main', '--now', '2026-03-06T07:00:00Z'],
      { ...file.env, RECON_ACCOUNTS_FILE: join(dir, 'accounts.json'), RECON_DATA_DIR: dir },
      { timeoutMs: 180_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('running the nightly run of 2026-03-05 on embedded Temporal');
    expect(run.stdout).toMatch(/^nightly 2026-03-02\.\.2026-03-05: [1-9]\d* row\(s\) loaded\n/);
    expect(run.stdout).toMatch(/^ {2}account us-main: loaded [1-9]\d* row\(s\) in 1 window\(s\);/m);
    expect(run.stdout).toMatch(/^ {2}account us-main: followed up \d+ of \d+ non-final transaction\(s\)/m);
    expect(run.stdout).not.toContain('ca-main');
    const loaded = await h.db
      .selectFrom('loads')
      .select('account')
      .distinct()
      .where('status', '=', 'committed')
      .execute();
    expect(loaded.map((l) => l.account)).toEqual(['us-main']);
  }, 240_000);
});
