import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { useTestDatabase } from '../support/database.ts';

// Several provider accounts in one warehouse: the provider's ids are unique within one account only,
// so the same ids loaded under two accounts are two sets of rows, and a load of one account never
// changes another's.

const FIXTURES = new URL('../fixtures/', import.meta.url);
const fixture = (path: string) => createReadStream(new URL(path, FIXTURES));

const handle = useTestDatabase();

const FILES: readonly { path: string; req: Omit<LoadRequest, 'account' | 'origin' | 'environment'> }[] = [
  {
    path: 'report/transactions-and-returns.json',
    req: { source: 'report-transactions', format: 'report-json', fileName: 'report.json' },
  },
  {
    path: 'legacy/type5-default.csv',
    req: { source: 'legacy-transactions', format: 'legacy', queryType: '5', fileName: 'type5.csv' },
  },
  {
    path: 'legacy/type1-returns.csv',
    req: { source: 'legacy-returns', format: 'legacy', queryType: '1', fileName: 'type1.csv' },
  },
  {
    path: 'legacy/type4-adjustments.csv',
    req: { source: 'legacy-adjustments', format: 'legacy', queryType: '4', fileName: 'type4.csv' },
  },
];

async function loadAll(account: string) {
  const summaries = [];
  for (const f of FILES) {
    summaries.push(
      await loadReport(
        handle,
        { ...f.req, account, origin: 'file', environment: 'staging' },
        fixture(f.path),
      ),
    );
  }
  summaries.push(
    await loadLedger(
      handle,
      { account, fileName: 'ledger.csv', origin: 'file', environment: 'staging' },
      fixture('ledger/ledger.csv'),
    ),
  );
  return summaries;
}

const TABLES = [
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'provider_adjustments',
  'merchant_ledger',
] as const;

/** Every row of the provider and ledger tables, per account, as text (to compare snapshots). */
async function snapshot(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of TABLES) {
    const r = await sql<{
      row: string;
    }>`select t::text as row from ${sql.table(table)} t order by t::text`.execute(handle.db);
    out[table] = r.rows.map((x) => x.row);
  }
  return out;
}

async function countsByAccount() {
  const r = await sql<{ table_name: string; account: string; n: number }>`
    select 'provider_transactions' as table_name, account, count(*)::int as n from provider_transactions group by account
    union all select 'legacy_transactions', account, count(*)::int from legacy_transactions group by account
    union all select 'provider_returns', account, count(*)::int from provider_returns group by account
    union all select 'provider_adjustments', account, count(*)::int from provider_adjustments group by account
    union all select 'merchant_ledger', account, count(*)::int from merchant_ledger group by account
    order by 1, 2`.execute(handle.db);
  return r.rows;
}

describe('loads of several accounts', () => {
  it('the same ids under two accounts are two rows each, and re-loading either changes nothing', async () => {
    const first = await loadAll('ca-main');
    const caOnly = await snapshot();
    const second = await loadAll('us-main');
    // Nothing of ca-main was matched, updated or restated by the us-main loads.
    expect(second.map((s) => s.rowsUpdated)).toEqual(second.map(() => 0));
    expect(second.map((s) => s.rowsInserted)).toEqual(first.map((s) => s.rowsInserted));
    const counts = await countsByAccount();
    for (const table of TABLES) {
      const ca = counts.find((c) => c.table_name === table && c.account === 'ca-main')?.n;
      const us = counts.find((c) => c.table_name === table && c.account === 'us-main')?.n;
      expect(ca, table).toBeGreaterThan(0);
      expect(us, table).toBe(ca);
    }
    const both = await snapshot();
    for (const table of TABLES) {
      expect(both[table]!.filter((row) => row.includes(',ca-main'))).toEqual(
        caOnly[table]!.filter((row) => row.includes(',ca-main')),
      );
    }

    const again = [...(await loadAll('ca-main')), ...(await loadAll('us-main'))];
    expect(again.map((s) => [s.rowsInserted, s.rowsUpdated])).toEqual(again.map(() => [0, 0]));
    expect(await snapshot()).toEqual(both);
    const history = await sql<{ n: number }>`select count(*)::int as n from row_history`.execute(handle.db);
    expect(history.rows[0]!.n).toBe(0);

    const loads = await sql<{ account: string; n: number }>`
      select account, count(*)::int as n from loads group by account order by account`.execute(handle.db);
    expect(loads.rows).toEqual([
      { account: 'ca-main', n: 10 },
      { account: 'us-main', n: 10 },
    ]);
  });

  it('a ledger entry goes to its account column, else its merchant_id mapping, else the load account', async () => {
    const csv = [
      'merchant_transaction_id,transaction_type,amount_cents,currency,status,booked_at,account,merchant_id',
      'LED-1,DEBIT,100,CAD,SUCCESSFUL,2026-03-08T12:00:00Z,ca-second,',
      'LED-1,DEBIT,200,USD,SUCCESSFUL,2026-03-08T12:00:00Z,,MRC-US',
      'LED-1,DEBIT,300,CAD,SUCCESSFUL,2026-03-08T12:00:00Z,,MRC-UNKNOWN',
      'LED-2,DEBIT,400,CAD,SUCCESSFUL,2026-03-08T12:00:00Z,nowhere,',
      'LED-3,DEBIT,500,CAD,SUCCESSFUL,2026-03-08T12:00:00Z,Bad_Name,',
    ].join('\n');
    const byMerchant = new Map([['MRC-US', 'us-second']]);
    const load = () =>
      loadLedger(
        handle,
        {
          account: 'ca-fallback',
          accountOfMerchant: (id) => byMerchant.get(id),
          knownAccounts: new Set(['ca-second', 'us-second', 'ca-fallback']),
          fileName: 'ledger-accounts.csv',
          origin: 'file',
          environment: 'staging',
        },
        Readable.from([csv]),
      );
    const summary = await load();
    expect([summary.rowsLoaded, summary.rowsRejected, summary.rowsInserted]).toEqual([3, 2, 3]);
    const rows = await sql<{ account: string; amount_cents: number }>`
      select account, amount_cents::int from merchant_ledger where merchant_transaction_id = 'LED-1'
      order by account`.execute(handle.db);
    expect(rows.rows).toEqual([
      { account: 'ca-fallback', amount_cents: 300 },
      { account: 'ca-second', amount_cents: 100 },
      { account: 'us-second', amount_cents: 200 },
    ]);
    const rejected = await sql<{ reason: string; account: string }>`
      select reason, account from rejected_rows where load_id = ${summary.loadId} order by line_number`.execute(
      handle.db,
    );
    expect(rejected.rows.map((r) => r.account)).toEqual(['ca-fallback', 'ca-fallback']);
    expect(rejected.rows[0]!.reason).toMatch(/account 'nowhere' is not in the accounts configuration/);
    expect(rejected.rows[1]!.reason).toMatch(/is not an account name/);
    const again = await load();
    expect([again.rowsInserted, again.rowsUpdated]).toEqual([0, 0]);
  });

  it('refuses a malformed account name before writing anything', async () => {
    const before = await sql<{ n: number }>`select count(*)::int as n from loads`.execute(handle.db);
    await expect(
      loadReport(
        handle,
        { ...FILES[0]!.req, account: 'CA Main', origin: 'file', environment: 'staging' },
        fixture(FILES[0]!.path),
      ),
    ).rejects.toThrow(/account "CA Main" is not an account name: use 1 to 32 of a-z, 0-9 and -/);
    const after = await sql<{ n: number }>`select count(*)::int as n from loads`.execute(handle.db);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});
