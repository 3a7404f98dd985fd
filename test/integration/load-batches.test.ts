import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { UnreadableInput } from '../../domain/errors.ts';
import { loadReport } from '../../ingest/load/load-report.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  adjustment,
  bytesOf,
  fakeParser,
  stagingTableCount,
  transaction,
  warehouseChecksum,
  reportRequest as report,
  rowHistoryOf,
} from '../support/ingest-records.ts';

// Loads merged batch by batch (the next batch staged while the previous one merges), with batches of
// a few rows so that keys, history and failures cross batch boundaries.

const handle = useTestDatabase();

const amountOf = async (id: string) =>
  handle.db
    .selectFrom('provider_transactions')
    .select(['amount_cents', 'load_id', 'first_load_id'])
    .where('transaction_id', '=', id)
    .executeTakeFirstOrThrow();

const stagingTables = () => stagingTableCount(handle.db);

describe('a load merged in batches', () => {
  it('keeps the last occurrence across batches, with one history entry per restated stored row', async () => {
    const first = await loadReport(
      handle,
      report(),
      bytesOf('x'),
      fakeParser([
        // Enough stored rows that later batches find them by index probes (the table is many
        // times the size of a batch).
        ...Array.from({ length: 300 }, (_, i) =>
          transaction({ transaction_id: `F${String(i).padStart(4, '0')}` }),
        ),
        transaction({ transaction_id: 'X1', amount_cents: 100 }),
        transaction({ transaction_id: 'X2', amount_cents: 200 }),
      ]),
    );
    expect(first).toMatchObject({ rowsInserted: 302 });
    // Batches of two: [X1, N1] [rejected, N2] [X1, N1] [X2, X2].
    const summary = await loadReport(
      handle,
      report({ batchRows: 2 }),
      bytesOf('x'),
      fakeParser([
        transaction({ transaction_id: 'X1', amount_cents: 101 }),
        transaction({ transaction_id: 'N1', amount_cents: 1 }),
        { reject: 'not a number' },
        transaction({ transaction_id: 'N2', amount_cents: 5 }),
        transaction({ transaction_id: 'X1', amount_cents: 102 }),
        transaction({ transaction_id: 'N1', amount_cents: 2 }),
        transaction({ transaction_id: 'X2', amount_cents: 201 }),
        transaction({ transaction_id: 'X2', amount_cents: 200 }),
      ]),
    );
    expect(summary).toMatchObject({
      rowsRead: 8,
      rowsLoaded: 7,
      rowsRejected: 1,
      rowsInserted: 2,
      rowsUpdated: 1,
      rowsUnchanged: 4,
    });
    expect(await amountOf('X1')).toEqual({
      amount_cents: 102,
      load_id: summary.loadId,
      first_load_id: first.loadId,
    });
    expect(await amountOf('N1')).toEqual({
      amount_cents: 2,
      load_id: summary.loadId,
      first_load_id: summary.loadId,
    });
    expect(await amountOf('X2')).toEqual({
      amount_cents: 200,
      load_id: first.loadId,
      first_load_id: first.loadId,
    });
    // The state after the first batch was never committed: only the stored version is history.
    const history = await rowHistoryOf(handle.db, summary.loadId);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ row_key: 'X1', changed_columns: ['amount_cents'] });
    expect(history[0]!.previous).toMatchObject({ amount_cents: 100, load_id: first.loadId });
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select(['line_number', 'reason'])
      .where('load_id', '=', summary.loadId)
      .execute();
    expect(rejected).toEqual([{ line_number: 4, reason: 'not a number' }]);
    expect(await stagingTables()).toBe(0);
  });

  it('inserts keys past the stored ones without probing, and still finds a key an earlier batch wrote', async () => {
    const summary = await loadReport(
      handle,
      report({ batchRows: 2 }),
      bytesOf('x'),
      fakeParser([
        transaction({ transaction_id: 'Z1', amount_cents: 1 }),
        transaction({ transaction_id: 'Z2', amount_cents: 1 }),
        transaction({ transaction_id: 'Z1', amount_cents: 3 }),
        transaction({ transaction_id: 'Z3', amount_cents: 1 }),
      ]),
    );
    expect(summary).toMatchObject({ rowsInserted: 3, rowsUpdated: 0, rowsUnchanged: 1 });
    expect((await amountOf('Z1')).amount_cents).toBe(3);
    expect(await rowHistoryOf(handle.db, summary.loadId)).toEqual([]);
  });

  it('a file broken after some batches merged keeps nothing of them', async () => {
    const before = await warehouseChecksum(handle.db);
    const broken = new UnreadableInput('broken.json', 7, 'JSON ends inside an object');
    await expect(
      loadReport(
        handle,
        report({ fileName: 'broken.json', batchRows: 2 }),
        bytesOf('x'),
        fakeParser([
          transaction({ transaction_id: 'X1', amount_cents: 999 }),
          transaction({ transaction_id: 'B1' }),
          transaction({ transaction_id: 'B2' }),
          { reject: 'x' },
          transaction({ transaction_id: 'ZZ9' }),
          broken,
        ]),
      ),
    ).rejects.toBe(broken);
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    expect(await stagingTables()).toBe(0);
  });

  it('a batch the database refuses fails the load whole, with that error, and the parser stops', async () => {
    const before = await warehouseChecksum(handle.db);
    const error = await loadReport(
      handle,
      report({ fileName: 'refused.json', batchRows: 2 }),
      bytesOf('x'),
      fakeParser([
        transaction({ transaction_id: 'R1' }),
        transaction({ transaction_id: 'R2' }),
        // currency must be three capitals: the staging column is text, the warehouse's check refuses it.
        transaction({ transaction_id: 'R3', currency: 'cad' }),
        ...Array.from({ length: 20 }, (_, i) => transaction({ transaction_id: `R${i + 10}` })),
      ]),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/currency_check/);
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const load = await handle.db
      .selectFrom('loads')
      .select(['status', 'error'])
      .orderBy('load_id', 'desc')
      .executeTakeFirstOrThrow();
    expect(load.status).toBe('failed');
    expect(load.error).toMatch(/currency_check/);
    expect(await stagingTables()).toBe(0);
  });

  it('numbers identical adjustments over the whole file, whatever the batches', async () => {
    const req = report({ source: 'legacy-adjustments', format: 'legacy', queryType: '4', batchRows: 1 });
    const rows = () =>
      fakeParser([
        adjustment({ adjustment_key: 'c'.repeat(64) }),
        adjustment({ adjustment_key: 'c'.repeat(64) }),
        adjustment({ adjustment_key: 'd'.repeat(64), amount_cents: 700 }),
      ]);
    expect(await loadReport(handle, req, bytesOf('x'), rows())).toMatchObject({ rowsInserted: 3 });
    const keys = await handle.db
      .selectFrom('provider_adjustments')
      .select('adjustment_key')
      .where('adjustment_key', '>=', 'c')
      .orderBy('adjustment_key')
      .execute();
    expect(keys.map((k) => k.adjustment_key)).toEqual([
      `${'c'.repeat(64)}#1`,
      `${'c'.repeat(64)}#2`,
      `${'d'.repeat(64)}#1`,
    ]);
    expect(await loadReport(handle, req, bytesOf('x'), rows())).toMatchObject({
      rowsInserted: 0,
      rowsUnchanged: 3,
    });
  });

  it('drops the staging tables a killed load left behind when the next load starts', async () => {
    await sql`create unlogged table recon_work.ingest_staging_999999_0_transaction (seq bigint)`.execute(
      handle.db,
    );
    expect(await stagingTables()).toBe(1);
    await loadReport(handle, report(), bytesOf('x'), fakeParser([transaction({ transaction_id: 'K1' })]));
    expect(await stagingTables()).toBe(0);
  });
});
