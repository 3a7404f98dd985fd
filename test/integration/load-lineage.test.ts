import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import { loadReport } from '../../ingest/load/load-report.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  adjustment,
  bytesOf,
  fakeParser,
  ledgerEntry,
  legacyTransaction,
  returnRecord,
  transaction,
  reportRequest as req,
} from '../support/ingest-records.ts';

// The warehouse tables' load_id / first_load_id are not foreign keys (migration 0001_warehouse_tables:
// a per-row check was 30 % of a bulk merge). These tests hold the guarantee instead: every lineage id
// resolves to a loads row, and loads rows cannot be deleted, truncated or renumbered.

const handle = useTestDatabase();

/** Lineage ids of every warehouse table that point to no loads row, per table and column. */
async function danglingLineage(): Promise<Record<string, number>> {
  const r = await sql<{ what: string; n: number }>`
    select 'provider_transactions.load_id' as what, count(*)::int as n from provider_transactions t
      where not exists (select 1 from loads l where l.load_id = t.load_id)
    union all select 'provider_transactions.first_load_id', count(*)::int from provider_transactions t
      where not exists (select 1 from loads l where l.load_id = t.first_load_id)
    union all select 'legacy_transactions.load_id', count(*)::int from legacy_transactions t
      where not exists (select 1 from loads l where l.load_id = t.load_id)
    union all select 'legacy_transactions.first_load_id', count(*)::int from legacy_transactions t
      where not exists (select 1 from loads l where l.load_id = t.first_load_id)
    union all select 'provider_returns.load_id', count(*)::int from provider_returns t
      where not exists (select 1 from loads l where l.load_id = t.load_id)
    union all select 'provider_returns.first_load_id', count(*)::int from provider_returns t
      where not exists (select 1 from loads l where l.load_id = t.first_load_id)
    union all select 'provider_adjustments.load_id', count(*)::int from provider_adjustments t
      where not exists (select 1 from loads l where l.load_id = t.load_id)
    union all select 'provider_adjustments.first_load_id', count(*)::int from provider_adjustments t
      where not exists (select 1 from loads l where l.load_id = t.first_load_id)
    union all select 'merchant_ledger.load_id', count(*)::int from merchant_ledger t
      where t.load_id is not null and not exists (select 1 from loads l where l.load_id = t.load_id)`.execute(
    handle.db,
  );
  return Object.fromEntries(r.rows.map((x) => [x.what, x.n]));
}

describe('lineage without per-row foreign keys', () => {
  it('points every warehouse row to a committed load, first and last', async () => {
    const first = await loadReport(
      handle,
      req({}),
      bytesOf('a\n'),
      fakeParser([transaction(), returnRecord()]),
    );
    const legacy = await loadReport(
      handle,
      req({ source: 'legacy-transactions', format: 'legacy', queryType: '5', fileName: 'l.csv' }),
      bytesOf('b\n'),
      fakeParser([legacyTransaction({ transaction_id: 'L1' })]),
    );
    const restated = await loadReport(
      handle,
      req({}),
      bytesOf('c\n'),
      fakeParser([transaction({ status: 'RETURNED', raw_status: 'RETURNED' })]),
    );
    await loadReport(
      handle,
      req({ source: 'legacy-adjustments', format: 'legacy', queryType: '4', fileName: 'a.csv' }),
      bytesOf('d\n'),
      fakeParser([adjustment()]),
    );
    await loadLedger(
      handle,
      { fileName: 'ledger.csv', origin: 'file', environment: 'staging' },
      bytesOf('e\n'),
      fakeParser([ledgerEntry()]),
    );
    const dangling = await danglingLineage();
    expect(Object.values(dangling)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);

    const t1 = await handle.db
      .selectFrom('provider_transactions')
      .select(['load_id', 'first_load_id'])
      .where('transaction_id', '=', 'T1')
      .executeTakeFirstOrThrow();
    expect(t1).toEqual({ load_id: restated.loadId, first_load_id: first.loadId });
    const l1 = await handle.db
      .selectFrom('provider_transactions')
      .select(['load_id', 'first_load_id', 'source'])
      .where('transaction_id', '=', 'L1')
      .executeTakeFirstOrThrow();
    expect(l1).toEqual({
      load_id: legacy.loadId,
      first_load_id: legacy.loadId,
      source: 'legacy-transactions',
    });
    const statuses = await handle.db.selectFrom('loads').select('status').distinct().execute();
    expect(statuses).toEqual([{ status: 'committed' }]);
  });

  it('refuses to delete, truncate or renumber loads rows', async () => {
    await expect(sql`delete from loads`.execute(handle.db)).rejects.toThrow(
      'loads rows are permanent: DELETE on loads refused',
    );
    await expect(sql`truncate loads cascade`.execute(handle.db)).rejects.toThrow(
      'loads rows are permanent: TRUNCATE on loads refused',
    );
    await expect(sql`update loads set load_id = default`.execute(handle.db)).rejects.toThrow(
      'loads rows are permanent: UPDATE on loads refused',
    );
    // Other columns of loads stay writable (the loader marks its load committed or failed).
    await sql`update loads set error = null where false`.execute(handle.db);
    const count = await sql<{ n: number }>`select count(*)::int as n from loads`.execute(handle.db);
    expect(count.rows[0]!.n).toBe(5);
  });
});
