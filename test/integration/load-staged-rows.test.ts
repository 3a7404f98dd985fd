import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { EnvironmentMismatch, UnreadableInput } from '../../domain/errors.ts';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  adjustment,
  bytesOf,
  fakeParser,
  ledgerEntry,
  legacyTransaction,
  returnRecord,
  stagingTableCount,
  transaction,
  warehouseChecksum,
  reportRequest as report,
} from '../support/ingest-records.ts';

// The loader driven by hand-made parsed rows: the load protocol without depending on parser details.

const handle = useTestDatabase();

const legacy5 = (over: Partial<LoadRequest> = {}) =>
  report({
    source: 'legacy-transactions',
    format: 'legacy',
    queryType: '5',
    fileName: 'legacy.csv',
    ...over,
  });

describe('loadReport with hand-made rows', () => {
  it('loads records, counts them and records the load with checksum and size', async () => {
    const content = 'header\nrow1\nrow2\n';
    const summary = await loadReport(
      handle,
      report(),
      bytesOf(content),
      fakeParser([
        transaction(),
        transaction({ transaction_id: 'T2', amount_cents: 100, raw: 'tab\there\\ and\nnewline\r' }),
        { reject: 'transactionAmount "12.5" is not an integer', raw: 'bad\tline' },
      ]),
    );
    expect(summary).toMatchObject({
      source: 'report-transactions',
      status: 'committed',
      rowsRead: 3,
      rowsLoaded: 2,
      rowsRejected: 1,
      rowsInserted: 2,
      rowsUpdated: 0,
      rowsUnchanged: 0,
      bytes: content.length,
      zipped: false,
    });
    expect(summary.fileSha256).toBe(createHash('sha256').update(content).digest('hex'));

    const rows = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .orderBy('transaction_id')
      .execute();
    expect(rows.map((r) => [r.transaction_id, r.amount_cents, r.source, r.load_id, r.first_load_id])).toEqual(
      [
        ['T1', 2015, 'report-transactions', summary.loadId, summary.loadId],
        ['T2', 100, 'report-transactions', summary.loadId, summary.loadId],
      ],
    );
    expect(rows[0]!.transaction_at).toBe('2026-03-08 07:30:00.123456+00');
    expect(rows[1]!.raw).toBe('tab\there\\ and\nnewline\r');
    const rejected = await handle.db.selectFrom('rejected_rows').selectAll().execute();
    expect(rejected.map((r) => [r.load_id, r.line_number, r.raw, r.reason])).toEqual([
      [summary.loadId, 4, 'bad\tline', 'transactionAmount "12.5" is not an integer'],
    ]);
    const load = await handle.db
      .selectFrom('loads')
      .selectAll()
      .where('load_id', '=', summary.loadId)
      .executeTakeFirstOrThrow();
    expect(load).toMatchObject({
      status: 'committed',
      environment: 'staging',
      origin: 'file',
      format: 'report-json',
      query_type: 'TRANSACTION',
      file_name: 'report.json',
      rows_read: 3,
      rows_loaded: 2,
      rows_rejected: 1,
      rows_inserted: 2,
      file_bytes: content.length,
      file_sha256: summary.fileSha256,
      error: null,
    });
    expect(load.finished_at).not.toBeNull();
  });

  it('re-loading the same rows changes no warehouse row and only adds a loads row', async () => {
    const rows = () =>
      fakeParser([
        transaction(),
        transaction({ transaction_id: 'T2', amount_cents: 100, raw: 'tab\there\\ and\nnewline\r' }),
      ]);
    const before = await warehouseChecksum(handle.db);
    const loadsBefore = await handle.db
      .selectFrom('loads')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    const again = await loadReport(handle, report(), bytesOf('header\nrow1\nrow2\n'), rows());
    expect(again).toMatchObject({
      status: 'committed',
      rowsRead: 2,
      rowsLoaded: 2,
      rowsInserted: 0,
      rowsUpdated: 0,
      rowsUnchanged: 2,
    });
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const loadsAfter = await handle.db
      .selectFrom('loads')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(loadsAfter.n).toBe(loadsBefore.n + 1);
  });

  it('a restatement updates the row and keeps the earlier version in row_history', async () => {
    const first = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'T1')
      .executeTakeFirstOrThrow();
    const summary = await loadReport(
      handle,
      report(),
      bytesOf('x'),
      fakeParser([transaction({ status: 'REJECTED', raw_status: 'REJECTED', fee_cents: 30 })]),
    );
    expect(summary).toMatchObject({ rowsInserted: 0, rowsUpdated: 1, rowsUnchanged: 0 });
    const now = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'T1')
      .executeTakeFirstOrThrow();
    expect(now).toMatchObject({
      status: 'REJECTED',
      fee_cents: 30,
      load_id: summary.loadId,
      first_load_id: first.first_load_id,
    });
    const history = await handle.db.selectFrom('row_history').selectAll().execute();
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      table_name: 'provider_transactions',
      row_key: 'T1',
      load_id: summary.loadId,
      changed_columns: ['status', 'raw_status', 'fee_cents'],
    });
    expect(history[0]!.previous).toMatchObject({
      status: 'SUCCESSFUL',
      fee_cents: 25,
      load_id: first.load_id,
    });
  });

  it('keeps the last of duplicate keys in one file and counts every occurrence as loaded', async () => {
    const summary = await loadReport(
      handle,
      report(),
      bytesOf('x'),
      fakeParser([
        transaction({ transaction_id: 'D1', amount_cents: 1 }),
        transaction({ transaction_id: 'D1', amount_cents: 2 }),
        transaction({ transaction_id: 'D1', amount_cents: 3 }),
      ]),
    );
    expect(summary).toMatchObject({
      rowsRead: 3,
      rowsLoaded: 3,
      rowsInserted: 1,
      rowsUpdated: 0,
      rowsUnchanged: 2,
    });
    const row = await handle.db
      .selectFrom('provider_transactions')
      .select('amount_cents')
      .where('transaction_id', '=', 'D1')
      .executeTakeFirstOrThrow();
    expect(row.amount_cents).toBe(3);

    // Keys in order until a repeated one: the repeat still wins.
    const ordered = await loadReport(
      handle,
      report(),
      bytesOf('x'),
      fakeParser([
        transaction({ transaction_id: 'D2', amount_cents: 1 }),
        transaction({ transaction_id: 'D3', amount_cents: 1 }),
        transaction({ transaction_id: 'D4', amount_cents: 1 }),
        transaction({ transaction_id: 'D2', amount_cents: 2 }),
      ]),
    );
    expect(ordered).toMatchObject({ rowsLoaded: 4, rowsInserted: 3, rowsUnchanged: 1 });
    const d2 = await handle.db
      .selectFrom('provider_transactions')
      .select('amount_cents')
      .where('transaction_id', '=', 'D2')
      .executeTakeFirstOrThrow();
    expect(d2.amount_cents).toBe(2);
  });

  it('a file broken half-way loads nothing and leaves the load failed with the error', async () => {
    const before = await warehouseChecksum(handle.db);
    const broken = new UnreadableInput('broken.json', 3, 'JSON ends inside an object');
    await expect(
      loadReport(
        handle,
        report({ fileName: 'broken.json' }),
        bytesOf('[{...'),
        fakeParser([transaction({ transaction_id: 'NEW1' }), { reject: 'x' }, broken]),
      ),
    ).rejects.toBe(broken);
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const load = await handle.db
      .selectFrom('loads')
      .selectAll()
      .orderBy('load_id', 'desc')
      .executeTakeFirstOrThrow();
    expect(load).toMatchObject({ status: 'failed', file_name: 'broken.json', rows_read: 2, rows_loaded: 0 });
    expect(load.error).toBe('UnreadableInput: broken.json:3: JSON ends inside an object');
    expect(await stagingTableCount(handle.db)).toBe(0);
  });

  it('reports progress (rows read, bytes) and a last call when reading ends', async () => {
    const calls: { rowsRead: number; bytes: number }[] = [];
    const summary = await loadReport(
      handle,
      report({ onProgress: (p) => calls.push(p) }),
      bytesOf('0123456789'),
      fakeParser([transaction({ transaction_id: 'PG1' }), transaction({ transaction_id: 'PG2' })]),
    );
    expect(summary.rowsRead).toBe(2);
    expect(calls.at(-1)).toEqual({ rowsRead: 2, bytes: 10 });
  });

  it('an aborted load keeps nothing', async () => {
    const before = await warehouseChecksum(handle.db);
    const controller = new AbortController();
    const items = [transaction({ transaction_id: 'AB1' }), transaction({ transaction_id: 'AB2' })];
    const parse = async function* (input: import('node:stream').Readable) {
      for await (const row of fakeParser(items)(input)) {
        yield row;
        controller.abort(new Error('operator cancelled'));
      }
    };
    await expect(
      loadReport(handle, report({ signal: controller.signal }), bytesOf('x'), parse),
    ).rejects.toThrow('operator cancelled');
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const load = await handle.db
      .selectFrom('loads')
      .selectAll()
      .orderBy('load_id', 'desc')
      .executeTakeFirstOrThrow();
    expect(load.status).toBe('failed');
  });

  it('refuses data of the other environment before writing anything', async () => {
    const count = async () =>
      (
        await handle.db
          .selectFrom('loads')
          .select(sql<number>`count(*)::int`.as('n'))
          .executeTakeFirstOrThrow()
      ).n;
    const before = await count();
    const error = await loadReport(
      handle,
      report({ environment: 'production' }),
      bytesOf('x'),
      fakeParser([transaction({ transaction_id: 'PROD1' })]),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvironmentMismatch);
    expect((error as Error).message).toBe(
      'refused to load report.json: it comes from the production environment but this warehouse holds staging data; point DATABASE_URL at a production warehouse or set RECON_ENVIRONMENT=staging',
    );
    expect(await count()).toBe(before);
    const prod = await handle.db
      .selectFrom('provider_transactions')
      .select('transaction_id')
      .where('transaction_id', '=', 'PROD1')
      .execute();
    expect(prod).toEqual([]);
  });

  it('a report mixing transactions and returns loads both, with report sources', async () => {
    const summary = await loadReport(
      handle,
      report(),
      bytesOf('x'),
      fakeParser([
        transaction({ transaction_id: 'MX1' }),
        returnRecord({ return_transaction_id: 'MXR1', original_transaction_id: 'MX1' }),
      ]),
    );
    expect(summary).toMatchObject({ rowsLoaded: 2, rowsInserted: 2 });
    const ret = await handle.db
      .selectFrom('provider_returns')
      .selectAll()
      .where('return_transaction_id', '=', 'MXR1')
      .executeTakeFirstOrThrow();
    expect(ret).toMatchObject({
      source: 'report-returns',
      original_transaction_id: 'MX1',
      next_action_date: '2026-03-15',
      amount_cents: 2015,
      load_id: summary.loadId,
    });
  });
});

describe('legacy precedence', () => {
  it('a legacy load fills provider_transactions only where no report row exists', async () => {
    const summary = await loadReport(
      handle,
      legacy5(),
      bytesOf('x'),
      fakeParser([
        legacyTransaction({ transaction_id: 'T1', amount_cents: 9999 }),
        legacyTransaction({
          transaction_id: 'L1',
          merchant_transaction_id: 'MTL1',
          local_time_flag: 'dst_gap',
        }),
        legacyTransaction({ transaction_id: 'L2', amount_cents: null }),
      ]),
    );
    expect(summary).toMatchObject({ source: 'legacy-transactions', rowsLoaded: 3, rowsInserted: 3 });
    const legacyRows = await handle.db
      .selectFrom('legacy_transactions')
      .select(['transaction_id', 'amount_cents', 'load_id'])
      .orderBy('transaction_id')
      .execute();
    expect(legacyRows).toEqual([
      { transaction_id: 'L1', amount_cents: 2015, load_id: summary.loadId },
      { transaction_id: 'L2', amount_cents: null, load_id: summary.loadId },
      { transaction_id: 'T1', amount_cents: 9999, load_id: summary.loadId },
    ]);
    // T1 came from the report API: the legacy amount does not replace it.
    const t1 = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'T1')
      .executeTakeFirstOrThrow();
    expect(t1).toMatchObject({ source: 'report-transactions', amount_cents: 2015 });
    const l1 = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'L1')
      .executeTakeFirstOrThrow();
    expect(l1).toMatchObject({
      source: 'legacy-transactions',
      merchant_id: 'M1',
      merchant_transaction_id: 'MTL1',
      product: null,
      product_user_id: 'P1',
      transaction_type: null,
      raw_transaction_type: 'P',
      status: 'SUCCESSFUL',
      raw_status: 'S',
      notify_status: 'Y',
      local_time_flag: 'dst_gap',
      transaction_at: '2026-03-08 07:30:00+00',
      load_id: summary.loadId,
    });
    // Without an amount a legacy row cannot stand as a provider transaction.
    const l2 = await handle.db
      .selectFrom('provider_transactions')
      .select('transaction_id')
      .where('transaction_id', '=', 'L2')
      .execute();
    expect(l2).toEqual([]);
  });

  it('a legacy restatement updates both tables; the same legacy rows again touch neither', async () => {
    const rows = () =>
      fakeParser([
        legacyTransaction({ transaction_id: 'T1', amount_cents: 9999 }),
        legacyTransaction({
          transaction_id: 'L1',
          merchant_transaction_id: 'MTL1',
          local_time_flag: 'dst_gap',
          status: 'REJECTED',
          raw_status: 'R',
        }),
        // L2 now has its amount: it can stand as a provider transaction.
        legacyTransaction({ transaction_id: 'L2', amount_cents: 500 }),
      ]);
    const selectT1 = () =>
      handle.db
        .selectFrom('provider_transactions')
        .select(['transaction_id', 'source', 'status', 'amount_cents', 'load_id'])
        .where('transaction_id', '=', 'T1')
        .executeTakeFirstOrThrow();
    // T1 is a report API row: no legacy load replaces it.
    const t1Before = await selectT1();
    expect(t1Before.source).toBe('report-transactions');
    const restated = await loadReport(handle, legacy5(), bytesOf('x'), rows());
    expect(restated).toMatchObject({ rowsInserted: 0, rowsUpdated: 2, rowsUnchanged: 1 });
    const provider = await handle.db
      .selectFrom('provider_transactions')
      .select(['transaction_id', 'source', 'status', 'amount_cents', 'load_id'])
      .where('transaction_id', 'in', ['L1', 'L2', 'T1'])
      .orderBy('transaction_id')
      .execute();
    expect(provider).toEqual([
      {
        transaction_id: 'L1',
        source: 'legacy-transactions',
        status: 'REJECTED',
        amount_cents: 2015,
        load_id: restated.loadId,
      },
      {
        transaction_id: 'L2',
        source: 'legacy-transactions',
        status: 'SUCCESSFUL',
        amount_cents: 500,
        load_id: restated.loadId,
      },
      t1Before,
    ]);
    const history = await handle.db
      .selectFrom('row_history')
      .select(['table_name', 'changed_columns'])
      .where('row_key', '=', 'L1')
      .where('load_id', '=', restated.loadId)
      .orderBy('table_name')
      .execute();
    expect(history).toEqual([
      { table_name: 'legacy_transactions', changed_columns: ['status', 'raw_status'] },
      { table_name: 'provider_transactions', changed_columns: ['status', 'raw_status'] },
    ]);

    const before = await warehouseChecksum(handle.db);
    const again = await loadReport(handle, legacy5(), bytesOf('x'), rows());
    expect(again).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 3 });
    expect(await warehouseChecksum(handle.db)).toEqual(before);
  });

  it('a later report row replaces the legacy-sourced one and keeps it in row_history', async () => {
    const summary = await loadReport(
      handle,
      report(),
      bytesOf('x'),
      fakeParser([
        transaction({
          transaction_id: 'L1',
          merchant_transaction_id: 'MTL1',
          transaction_at: '2026-03-08T07:30:00Z',
        }),
      ]),
    );
    expect(summary.rowsUpdated).toBe(1);
    const l1 = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'L1')
      .executeTakeFirstOrThrow();
    expect(l1).toMatchObject({ source: 'report-transactions', product: 'IBT', transaction_type: 'DEBIT' });
    const history = await handle.db
      .selectFrom('row_history')
      .selectAll()
      .where('row_key', '=', 'L1')
      .where('load_id', '=', summary.loadId)
      .executeTakeFirstOrThrow();
    expect(history.changed_columns).toContain('source');
    expect(history.previous).toMatchObject({ source: 'legacy-transactions', transaction_type: null });
  });
});

describe('adjustments and ledger', () => {
  it('numbers identical adjustments by occurrence and re-loads them onto the same keys', async () => {
    const rows = () =>
      fakeParser([
        adjustment(),
        adjustment(),
        adjustment({ adjustment_key: 'b'.repeat(64), amount_cents: 700 }),
      ]);
    const req = report({ source: 'legacy-adjustments', format: 'legacy', queryType: '4' });
    const first = await loadReport(handle, req, bytesOf('x'), rows());
    expect(first).toMatchObject({ rowsLoaded: 3, rowsInserted: 3 });
    const keys = await handle.db
      .selectFrom('provider_adjustments')
      .select(['adjustment_key', 'amount_cents', 'source'])
      .orderBy('adjustment_key')
      .execute();
    expect(keys).toEqual([
      { adjustment_key: `${'a'.repeat(64)}#1`, amount_cents: -500, source: 'legacy-adjustments' },
      { adjustment_key: `${'a'.repeat(64)}#2`, amount_cents: -500, source: 'legacy-adjustments' },
      { adjustment_key: `${'b'.repeat(64)}#1`, amount_cents: 700, source: 'legacy-adjustments' },
    ]);
    const second = await loadReport(handle, req, bytesOf('x'), rows());
    expect(second).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 3 });
  });

  it('loads ledger entries, detects NDJSON, and records changes in row_history', async () => {
    const first = await loadLedger(
      handle,
      { fileName: 'ledger.ndjson', origin: 'file', environment: 'staging' },
      bytesOf('{"a":1}\n'),
      fakeParser([ledgerEntry(), ledgerEntry({ merchant_transaction_id: 'MT2', amount_cents: 500 })]),
    );
    expect(first).toMatchObject({ source: 'ledger', rowsInserted: 2 });
    const load = await handle.db
      .selectFrom('loads')
      .select(['format', 'source'])
      .where('load_id', '=', first.loadId)
      .executeTakeFirstOrThrow();
    expect(load).toEqual({ format: 'ledger-ndjson', source: 'ledger' });
    const second = await loadLedger(
      handle,
      { fileName: 'ledger.csv', origin: 'file', environment: 'staging' },
      bytesOf('merchant_transaction_id,...\n'),
      fakeParser([
        ledgerEntry({ status: 'RETURNED' }),
        ledgerEntry({ merchant_transaction_id: 'MT2', amount_cents: 500 }),
      ]),
    );
    expect(second).toMatchObject({ rowsInserted: 0, rowsUpdated: 1, rowsUnchanged: 1 });
    const l2 = await handle.db
      .selectFrom('loads')
      .select('format')
      .where('load_id', '=', second.loadId)
      .executeTakeFirstOrThrow();
    expect(l2.format).toBe('ledger-csv');
    const entry = await handle.db
      .selectFrom('merchant_ledger')
      .selectAll()
      .where('merchant_transaction_id', '=', 'MT1')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      status: 'RETURNED',
      load_id: second.loadId,
      booked_at: '2026-03-08 07:31:00+00',
    });
    const history = await handle.db
      .selectFrom('row_history')
      .selectAll()
      .where('table_name', '=', 'merchant_ledger')
      .execute();
    expect(history.map((h) => [h.row_key, h.changed_columns])).toEqual([['MT1', ['status']]]);
  });
});
