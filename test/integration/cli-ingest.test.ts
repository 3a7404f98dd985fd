import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon as runRecon, type ReconRun, ROOT } from '../support/recon-process.ts';

// recon parse / import / ledger import as a user runs them: a child process, DATABASE_URL, exit codes.

const FIXTURES = join(ROOT, 'test/fixtures');

let handle: DatabaseHandle;
let dir: string;
beforeAll(async () => {
  handle = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'recon-cli-ingest-'));
});
afterAll(async () => {
  await handle?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function recon(...args: string[]): Promise<ReconRun> {
  return runRecon(handle.connectionString, args, { RECON_DATA_DIR: join(dir, 'data') });
}

describe('recon parse', () => {
  it('prints good records as NDJSON and rejected lines with reasons on stderr', async () => {
    const r = await recon(
      'parse',
      '--format',
      'legacy',
      '--query-type',
      '5',
      join(FIXTURES, 'legacy/type5-bad-rows.csv'),
    );
    expect(r.code).toBe(0);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      kind: 'legacy-transaction',
      transaction_id: 'ET9000000007',
      amount_cents: 1000,
      transaction_at: '2026-04-01T16:00:00.000000Z',
    });
    expect(r.stderr).toContain(
      `type5-bad-rows.csv:1: rejected: field 1 (transaction date) '20260230' is not a date that exists`,
    );
    expect(r.stderr).toContain('type5-bad-rows.csv: 6 line(s) rejected');
  });
});

describe('recon import and recon ledger import', () => {
  it('loads a legacy file, then the same file again without changes, and prints JSON summaries', async () => {
    const file = join(FIXTURES, 'legacy/type5-default.csv');
    const first = await recon('import', '--format', 'legacy', '--query-type', '5', file);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      source: 'legacy-transactions',
      status: 'committed',
      rowsRead: 8,
      rowsLoaded: 8,
      rowsInserted: 8,
      bytes: readFileSync(file).length,
    });
    const again = await recon('import', '--format', 'legacy', '--query-type', '5', file);
    expect(JSON.parse(again.stdout)).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 8 });
    const rows = await handle.db.selectFrom('legacy_transactions').select('transaction_id').execute();
    expect(rows).toHaveLength(8);
  });

  it('loads the ledger CSV', async () => {
    const r = await recon('ledger', 'import', join(FIXTURES, 'ledger/ledger.csv'));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      source: 'ledger',
      rowsRead: 6,
      rowsLoaded: 3,
      rowsRejected: 3,
    });
  });

  it('exits 2 when the file cannot be read at all, and keeps nothing of a truncated ZIP', async () => {
    const missing = await recon('import', '--format', 'report-json', join(dir, 'nope.json'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.json: cannot be read (no such file): check the path');

    const zip = readFileSync(join(FIXTURES, 'report/transactions-and-returns.json.zip'));
    const truncated = join(dir, 'truncated.zip');
    writeFileSync(truncated, zip.subarray(0, zip.length - 40));
    const r = await recon('import', '--format', 'report-json', truncated);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^recon: .*truncated\.zip/);
    const load = await handle.db
      .selectFrom('loads')
      .selectAll()
      .orderBy('load_id', 'desc')
      .executeTakeFirstOrThrow();
    expect(load).toMatchObject({ status: 'failed', file_name: truncated });
    const txns = await handle.db
      .selectFrom('provider_transactions')
      .select('transaction_id')
      .where('source', '=', 'report-transactions')
      .execute();
    expect(txns).toEqual([]);

    const badOption = await recon('import', '--format', 'legacy', join(FIXTURES, 'legacy/type5-default.csv'));
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toBe(
      'recon: --format legacy needs --query-type 1, 4, 5 or 6 (got "")\nsee recon import --help\n',
    );
  });
});

describe('recon ledger import with several accounts', () => {
  it('files each entry under its account: its column, else its merchant id, else --account', async () => {
    const accountsFile = join(dir, 'accounts.json');
    writeFileSync(
      accountsFile,
      JSON.stringify({
        accounts: [
          { name: 'ca-main', environment: 'staging', legacyMerchantId: 'MRC00001' },
          { name: 'us-main', environment: 'staging', legacyMerchantId: 'MRC00002' },
        ],
      }),
    );
    const entry = (id: string, extra: Record<string, string>) =>
      JSON.stringify({
        merchant_transaction_id: id,
        transaction_type: 'DEBIT',
        amount_cents: 1000,
        currency: 'CAD',
        status: 'SUCCESSFUL',
        booked_at: '2026-04-01T12:00:00Z',
        ...extra,
      });
    const file = join(dir, 'ledger-accounts.ndjson');
    writeFileSync(
      file,
      [
        entry('ACC-1', { account: 'us-main' }),
        entry('ACC-2', { merchant_id: 'MRC00002' }),
        entry('ACC-3', {}),
      ].join('\n') + '\n',
    );
    const env = { RECON_DATA_DIR: join(dir, 'data'), RECON_ACCOUNTS_FILE: accountsFile };
    const r = await runRecon(
      handle.connectionString,
      ['ledger', 'import', '--account', 'ca-main', file],
      env,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = await handle.db
      .selectFrom('merchant_ledger')
      .select(['merchant_transaction_id', 'account'])
      .where('merchant_transaction_id', 'like', 'ACC-%')
      .orderBy('merchant_transaction_id')
      .execute();
    expect(rows).toEqual([
      { merchant_transaction_id: 'ACC-1', account: 'us-main' },
      { merchant_transaction_id: 'ACC-2', account: 'us-main' },
      { merchant_transaction_id: 'ACC-3', account: 'ca-main' },
    ]);

    const unknown = await runRecon(
      handle.connectionString,
      ['ledger', 'import', '--account', 'eu-main', file],
      env,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^recon: no account named "eu-main": the accounts are ca-main, us-main/);
  });
});
