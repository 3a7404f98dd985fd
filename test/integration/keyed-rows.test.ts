import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { estimatedRows, probeEach, PROBE_ROWS, rowsWithKeys } from '../../reconcile/rules/keyed-rows.ts';
import { useTestDatabase } from '../support/database.ts';

// A statement of a run over changed keys finds its keys' rows one index descent a key or by a hash
// join with the rows it would read without them (reconcile/rules/keyed-rows.ts): the same rows
// either way, chosen from the number of keys against those rows.

const h = useTestDatabase();

it('finds the same rows of the keys one descent a key and by a hash join', async () => {
  await sql`truncate merchant_ledger cascade`.execute(h.db);
  await sql`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency, status, booked_at,
      transaction_id, original_merchant_transaction_id)
    select 'M' || i, 'DEBIT', 100 + i, 'CAD', 'SUCCESSFUL', '2026-03-02 15:00:00+00', 'T' || (i % 7), 'M' || (i % 3)
    from generate_series(1, 300) i`.execute(h.db);
  // A key twice, a key no row carries, keys that several rows carry (transaction_id, original).
  const keys = sql`select k from (values ('M1'), ('M1'), ('M250'), ('absent'), ('T3'), ('M2')) v(k)`;
  const rowsOf = async (column: string, probe: boolean) =>
    (
      await sql<{
        id: string;
      }>`select merchant_transaction_id as id from ${rowsWithKeys('merchant_ledger', column, keys, probe)} x
        order by 1`.execute(h.db)
    ).rows.map((r) => r.id);
  for (const column of ['merchant_transaction_id', 'transaction_id', 'original_merchant_transaction_id']) {
    const probed = await rowsOf(column, true);
    expect(probed.length, column).toBeGreaterThan(0);
    expect(await rowsOf(column, false), column).toEqual(probed);
  }
  expect(await rowsOf('merchant_transaction_id', true)).toEqual(['M1', 'M2', 'M250']);
});

it('probes each key while the keys are fewer than the rows a hash join reads over PROBE_ROWS', async () => {
  expect(probeEach(100, 100 * PROBE_ROWS + 1)).toBe(true);
  expect(probeEach(100, 100 * PROBE_ROWS)).toBe(false);
  await sql`truncate merchant_ledger cascade`.execute(h.db);
  await sql`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency, status, booked_at)
    select 'M' || i, 'DEBIT', 100, 'CAD', 'SUCCESSFUL', '2026-03-02 15:00:00+00' from generate_series(1, 5000) i`.execute(
    h.db,
  );
  await sql`analyze merchant_ledger`.execute(h.db);
  const rows = await h.db
    .transaction()
    .execute((trx) => estimatedRows({ trx }, sql`select 1 from merchant_ledger`));
  expect(rows).toBe(5000);
});
