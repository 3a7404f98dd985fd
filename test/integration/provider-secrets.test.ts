import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { startSandbox, type Sandbox, type SandboxFaults } from '../../sandbox/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon, type ReconRun } from '../support/recon-process.ts';

/**
 * Secrets never leave: `recon pull` runs as a child process against a sandbox that fails in every way
 * it can, and everything it prints (stdout and stderr) and everything in the database afterwards is
 * searched for the client secret, the legacy merchant password, every access token the sandbox issued,
 * and the wrong credentials tried.
 */

const WRONG_SECRET = 'wrong-client-secret-7f3a9c';
const WRONG_PASS = 'wrongpass-5d2e';

let sandbox: Sandbox;
let handle: DatabaseHandle;
const printed: string[] = [];

async function pull(args: string[], env: Record<string, string> = {}): Promise<ReconRun> {
  const r = await recon(handle.connectionString, ['pull', ...args], {
    HOME: process.env.HOME ?? '/tmp',
    ...sandbox.env(),
    ...env,
  });
  printed.push(r.stdout, r.stderr);
  return r;
}

async function failing(faults: SandboxFaults, args: string[], env: Record<string, string> = {}) {
  sandbox.setFaults(faults);
  try {
    return await pull(args, env);
  } finally {
    sandbox.setFaults({});
  }
}

const WINDOW = ['--from', '2026-10-30', '--to', '2026-11-02'];

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 11, transactions: 800, from: '2026-10-25', to: '2026-11-05' });
  handle = await createTestDatabase();
});
afterAll(async () => {
  await handle?.close();
  await sandbox?.close();
});

describe('recon pull against a faulty sandbox', () => {
  it(
    'fails with the right message for each fault, and never prints or stores a secret',
    { timeout: 120_000 },
    async () => {
      const ok = await pull(['--source', 'report-transactions', ...WINDOW]);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({
        source: 'report-transactions',
        status: 'committed',
        rowsRejected: 0,
      });
      expect((await pull(['--source', 'legacy-transactions', ...WINDOW])).code).toBe(0);

      const unavailable = await failing({ serverErrors: 100 }, ['--source', 'report-returns', ...WINDOW]);
      expect(unavailable.code).toBe(1);
      expect(unavailable.stderr).toMatch(
        /^recon: report RETURN \S+: the provider answered HTTP 500 4 time\(s\); retry later\n$/,
      );

      const cut = await failing({ cuts: 1, cutAfterBytes: 3000 }, [
        '--source',
        'report-transactions',
        ...WINDOW,
      ]);
      expect(cut.code).toBe(1);
      expect(cut.stderr).toMatch(/: the response stopped after 3000 bytes \(\w+\); fetch it again/);

      const truncated = await failing({ truncateZip: true }, [
        '--source',
        'report-transactions',
        '--zip',
        ...WINDOW,
      ]);
      expect(truncated.code).toBe(1);
      expect(truncated.stderr).toMatch(/the ZIP sent by the provider is unreadable .*; fetch it again/);

      const limited = await failing({ rateLimits: 100, retryAfter: '3600' }, [
        '--source',
        'report-returns',
        ...WINDOW,
      ]);
      expect(limited.code).toBe(1);
      expect(limited.stderr).toMatch(/rate limited by the provider \(HTTP 429\); retry after 3600 s/);

      const expired = await failing({ tokenTtlMs: 0 }, ['--source', 'report-returns', ...WINDOW]);
      expect(expired.code).toBe(2);
      expect(expired.stderr).toMatch(
        /refused a freshly issued token \(HTTP 401\): check RECON_CLIENT_ID \/ RECON_CLIENT_SECRET/,
      );

      const badSecret = await pull(['--source', 'report-returns', ...WINDOW], {
        RECON_CLIENT_SECRET: WRONG_SECRET,
      });
      expect(badSecret.code).toBe(2);
      expect(badSecret.stderr).toBe(
        'recon: the token endpoint refused the client credentials (HTTP 401): check RECON_CLIENT_ID / RECON_CLIENT_SECRET for the staging environment\n',
      );

      const badPass = await pull(['--source', 'legacy-returns', ...WINDOW], {
        RECON_LEGACY_MERCHANT_PASS: WRONG_PASS,
      });
      expect(badPass.code).toBe(2);
      expect(badPass.stderr).toMatch(/check RECON_LEGACY_MERCHANT_ID \/ RECON_LEGACY_MERCHANT_PASS/);

      const tooLong = await pull([
        '--source',
        'legacy-returns',
        '--from',
        '2026-09-01',
        '--to',
        '2026-10-15',
      ]);
      expect(tooLong.code).toBe(2);
      expect(tooLong.stderr).toBe(
        'recon: 2026-09-01..2026-10-15 spans 45 days; a pull covers at most 40 (use recon backfill for longer ranges)\nsee recon pull --help\n',
      );

      const secrets = [
        sandbox.clientSecret,
        sandbox.legacyMerchantPass,
        WRONG_SECRET,
        WRONG_PASS,
        ...sandbox.issuedTokens(),
      ];
      expect(sandbox.issuedTokens().length).toBeGreaterThanOrEqual(4);
      const output = printed.join('\n');
      expect(output.length).toBeGreaterThan(500);

      const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(
        handle.db,
      );
      let stored = '';
      for (const { table_name } of tables.rows) {
        const dump = await sql<{
          text: string | null;
        }>`select string_agg(t::text, E'\n') as text from ${sql.table(table_name)} t`.execute(handle.db);
        stored += dump.rows[0]?.text ?? '';
      }
      const failedLoads = await sql<{
        n: number;
      }>`select count(*)::int as n from loads where status = 'failed' and error is not null`.execute(
        handle.db,
      );
      expect(failedLoads.rows[0]!.n).toBeGreaterThanOrEqual(2); // the cut and the truncated ZIP are recorded
      expect(stored.length).toBeGreaterThan(10_000);

      for (const secret of secrets) {
        expect(output.includes(secret), 'a secret was printed').toBe(false);
        expect(stored.includes(secret), 'a secret was stored').toBe(false);
      }
    },
  );
});
