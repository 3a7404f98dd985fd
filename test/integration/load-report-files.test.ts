import { createReadStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { EnvironmentMismatch, UnreadableInput } from '../../domain/errors.ts';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { useTestDatabase } from '../support/database.ts';
import { warehouseChecksum } from '../support/ingest-records.ts';

// End to end through the real parsers: fixture files and small hand-written bad inputs.

const FIXTURES = new URL('../fixtures/', import.meta.url);
const fixture = (path: string) => createReadStream(new URL(path, FIXTURES));
const text = (content: string | Buffer) => Readable.from([Buffer.from(content)]);

const handle = useTestDatabase();

const legacy = (queryType: string, fileName: string, over: Partial<LoadRequest> = {}): LoadRequest => ({
  source:
    queryType === '1' ? 'legacy-returns' : queryType === '4' ? 'legacy-adjustments' : 'legacy-transactions',
  format: 'legacy',
  queryType,
  fileName,
  origin: 'file',
  environment: 'staging',
  ...over,
});
const json = (fileName: string): LoadRequest => ({
  source: 'report-transactions',
  format: 'report-json',
  fileName,
  origin: 'file',
  environment: 'staging',
});

async function lastLoad() {
  return handle.db.selectFrom('loads').selectAll().orderBy('load_id', 'desc').executeTakeFirstOrThrow();
}
async function count(table: 'provider_transactions' | 'legacy_transactions' | 'rejected_rows' | 'loads') {
  const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(handle.db);
  return r.rows[0]!.n;
}

const LINE =
  '20260401,D,ORD-1,ET1,0000001000,CAD,S,IU1,0000000025,MERCH001,,C,player-1,120000,CA,a@example.com,001-00011-****0001';

describe('legacy type 5 fixtures', () => {
  it('converts Eastern times on the March and November DST days to UTC and flags gap and fold', async () => {
    const summary = await loadReport(
      handle,
      legacy('5', 'type5-default.csv'),
      fixture('legacy/type5-default.csv'),
    );
    expect(summary).toMatchObject({
      status: 'committed',
      rowsRead: 8,
      rowsLoaded: 8,
      rowsRejected: 0,
      rowsInserted: 8,
    });
    const rows = await handle.db
      .selectFrom('provider_transactions')
      .select([
        'transaction_id',
        'transaction_at',
        'transaction_on',
        'local_time_flag',
        'amount_cents',
        'fee_cents',
        'status',
        'raw_status',
        'source',
      ])
      .where('transaction_on', 'in', ['2026-03-08', '2026-11-01'])
      .orderBy('transaction_id')
      .execute();
    expect(rows.map((r) => [r.transaction_id, r.transaction_at, r.local_time_flag])).toEqual([
      ['ET2603080001', '2026-03-08 06:59:59+00', null],
      ['ET2603080002', '2026-03-08 07:30:00+00', 'dst_gap'],
      ['ET2603080003', '2026-03-08 07:00:00+00', null],
      ['ET2611010001', '2026-11-01 04:59:59+00', null],
      ['ET2611010002', '2026-11-01 05:30:00+00', 'dst_fold'],
      ['ET2611010003', '2026-11-01 07:00:00+00', null],
    ]);
    expect(rows[0]).toMatchObject({
      amount_cents: 2015,
      fee_cents: 125,
      status: 'SUCCESSFUL',
      raw_status: 'S',
      source: 'legacy-transactions',
    });
    expect(rows[1]).toMatchObject({ amount_cents: 10000, status: 'FAILED', raw_status: 'F' });
    expect(await count('legacy_transactions')).toBe(8);
  });

  it('re-loading the same file changes no warehouse row and adds one loads row', async () => {
    const before = await warehouseChecksum(handle.db);
    const loads = await count('loads');
    const summary = await loadReport(
      handle,
      legacy('5', 'type5-default.csv'),
      fixture('legacy/type5-default.csv'),
    );
    expect(summary).toMatchObject({ rowsRead: 8, rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: 8 });
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    expect(await count('loads')).toBe(loads + 1);
  });

  it('a restated status and fee update the row and keep the earlier version in row_history', async () => {
    const original = readFileSync(new URL('legacy/type5-default.csv', FIXTURES), 'utf8');
    const restated = original.replace(
      '20260308,D,ORD-100002,ET2603080001,0000002015,CAD,S,IU00017,0000000125,',
      '20260308,D,ORD-100002,ET2603080001,0000002015,CAD,F,IU00017,0000000150,',
    );
    expect(restated).not.toBe(original);
    const summary = await loadReport(handle, legacy('5', 'type5-restated.csv'), text(restated));
    expect(summary).toMatchObject({ rowsRead: 8, rowsInserted: 0, rowsUpdated: 1, rowsUnchanged: 7 });
    const history = await handle.db
      .selectFrom('row_history')
      .selectAll()
      .where('row_key', '=', 'ET2603080001')
      .orderBy('table_name')
      .execute();
    expect(history.map((h) => [h.table_name, h.changed_columns, h.load_id])).toEqual([
      ['legacy_transactions', ['status', 'raw_status', 'fee_cents'], summary.loadId],
      ['provider_transactions', ['status', 'raw_status', 'fee_cents'], summary.loadId],
    ]);
    expect(history[1]!.previous).toMatchObject({ status: 'SUCCESSFUL', raw_status: 'S', fee_cents: 125 });
    const now = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'ET2603080001')
      .executeTakeFirstOrThrow();
    expect(now).toMatchObject({ status: 'FAILED', fee_cents: 150, load_id: summary.loadId });
  });

  it('rejects bad lines with line and reason while the good rows load', async () => {
    const summary = await loadReport(
      handle,
      legacy('5', 'type5-bad-rows.csv'),
      fixture('legacy/type5-bad-rows.csv'),
    );
    expect(summary).toMatchObject({
      status: 'committed',
      rowsRead: 7,
      rowsLoaded: 1,
      rowsRejected: 6,
      rowsInserted: 1,
    });
    expect(summary.rowsRead).toBe(summary.rowsLoaded + summary.rowsRejected);
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select(['line_number', 'reason'])
      .where('load_id', '=', summary.loadId)
      .orderBy('line_number')
      .execute();
    expect(rejected).toEqual([
      { line_number: 1, reason: "field 1 (transaction date) '20260230' is not a date that exists" },
      {
        line_number: 2,
        reason:
          "field 5 (amount): amount '20.15' is not digits only (implied decimals: 20.15 is written 2015)",
      },
      { line_number: 3, reason: "field 6 (currency) 'cad' is not three uppercase letters (ISO 4217)" },
      { line_number: 4, reason: 'expected 17 fields (query type 5, fields 1-17), found 15' },
      { line_number: 5, reason: 'field 3 (merchant transaction ID) is 34 characters long; the limit is 30' },
      { line_number: 6, reason: "field 14 (transaction time): time '126000' does not exist" },
    ]);
    const load = await lastLoad();
    expect(load).toMatchObject({ rows_read: 7, rows_loaded: 1, rows_rejected: 6 });
  });

  it('reads CRLF line ends and a missing final newline', async () => {
    const crlf = `${LINE}\r\n${LINE.replaceAll('ORD-1,ET1', 'ORD-2,ET2')}`;
    const summary = await loadReport(handle, legacy('5', 'crlf.csv'), text(crlf));
    expect(summary).toMatchObject({ rowsRead: 2, rowsLoaded: 2, rowsRejected: 0 });
    const rows = await handle.db
      .selectFrom('legacy_transactions')
      .select(['transaction_id', 'bank_account_masked', 'raw'])
      .where('transaction_id', 'in', ['ET1', 'ET2'])
      .orderBy('transaction_id')
      .execute();
    expect(rows).toEqual([
      { transaction_id: 'ET1', bank_account_masked: '001-00011-****0001', raw: LINE },
      {
        transaction_id: 'ET2',
        bank_account_masked: '001-00011-****0001',
        raw: LINE.replaceAll('ORD-1,ET1', 'ORD-2,ET2'),
      },
    ]);
  });

  it('an empty file commits a load of zero rows', async () => {
    const summary = await loadReport(handle, legacy('5', 'empty.csv'), text(''));
    expect(summary).toMatchObject({
      status: 'committed',
      rowsRead: 0,
      rowsLoaded: 0,
      rowsRejected: 0,
      bytes: 0,
    });
    expect(summary.fileSha256).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('loads a response_fields selection in the order listed', async () => {
    const summary = await loadReport(
      handle,
      legacy('5', 'type5-fields.csv', { fields: [4, 1, 2, 5, 6, 7, 14, 20, 21, 22] }),
      fixture('legacy/type5-fields-4-1-2-5-6-7-14-20-21-22.csv'),
    );
    expect(summary.status).toBe('committed');
    expect(summary.rowsRead).toBe(summary.rowsLoaded + summary.rowsRejected);
    const load = await lastLoad();
    expect(load.response_fields).toBe('4,1,2,5,6,7,14,20,21,22');
  });
});

describe('legacy returns and adjustments', () => {
  it('loads type 1 returns and type 4 adjustments', async () => {
    const returns = await loadReport(
      handle,
      legacy('1', 'type1-returns.csv'),
      fixture('legacy/type1-returns.csv'),
    );
    expect(returns).toMatchObject({ status: 'committed', rowsRead: 2, rowsLoaded: 2, rowsInserted: 2 });
    const r = await handle.db
      .selectFrom('provider_returns')
      .select(['return_transaction_id', 'original_transaction_id', 'source'])
      .orderBy('return_transaction_id')
      .execute();
    expect(r).toEqual([
      {
        return_transaction_id: 'RT2603200001',
        original_transaction_id: 'ET2601150001',
        source: 'legacy-returns',
      },
      {
        return_transaction_id: 'RT2603210001',
        original_transaction_id: 'ET2603080003',
        source: 'legacy-returns',
      },
    ]);

    const adjustments = await loadReport(
      handle,
      legacy('4', 'type4-adjustments.csv'),
      fixture('legacy/type4-adjustments.csv'),
    );
    expect(adjustments).toMatchObject({ status: 'committed', rowsRead: 3, rowsLoaded: 3, rowsInserted: 3 });
    const keys = await handle.db
      .selectFrom('provider_adjustments')
      .select(['adjustment_key', 'amount_cents', 'notes'])
      .orderBy('adjustment_key')
      .execute();
    expect(keys).toEqual([
      {
        adjustment_key: '1670d1277db4b10bf84ef71bb37d6475893eded2e67d7cd5323200ae207e31af#1',
        amount_cents: 50000,
        notes: 'Chargeback adjustment, case 7781',
      },
      {
        adjustment_key: '747d57d6bad649ea3c680b42cf202f17ccf707dfe4b77e9e938a2b9f7f00266b#1',
        amount_cents: -125,
        notes: 'Fee reversal',
      },
      {
        adjustment_key: '747d57d6bad649ea3c680b42cf202f17ccf707dfe4b77e9e938a2b9f7f00266b#2',
        amount_cents: -125,
        notes: 'Fee reversal',
      },
    ]);
    const again = await loadReport(
      handle,
      legacy('4', 'type4-adjustments.csv'),
      fixture('legacy/type4-adjustments.csv'),
    );
    expect(again).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: adjustments.rowsLoaded });
  });
});

describe('report files', () => {
  it('a zipped JSON report mixing transactions and returns loads both kinds and takes precedence over legacy', async () => {
    const summary = await loadReport(
      handle,
      json('transactions-and-returns.json.zip'),
      fixture('report/transactions-and-returns.json.zip'),
    );
    expect(summary).toMatchObject({
      status: 'committed',
      zipped: true,
      rowsRead: 7,
      rowsLoaded: 5,
      rowsRejected: 2,
      rowsInserted: 5,
    });
    const t = await handle.db
      .selectFrom('provider_transactions')
      .selectAll()
      .where('transaction_id', '=', 'IBT2603080000001')
      .executeTakeFirstOrThrow();
    expect(t).toMatchObject({
      source: 'report-transactions',
      transaction_at: '2026-03-08 06:59:59.999999+00',
      amount_cents: 12550,
      load_id: summary.loadId,
    });
    const returns = await handle.db
      .selectFrom('provider_returns')
      .select(['return_transaction_id', 'source'])
      .where('load_id', '=', summary.loadId)
      .execute();
    expect(returns.map((r) => r.source)).toEqual(['report-returns', 'report-returns']);
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select(['line_number', 'reason'])
      .where('load_id', '=', summary.loadId)
      .execute();
    expect(rejected).toEqual([
      {
        line_number: 68,
        reason: "transactionAmount: amount '12.50' (a string) is not a JSON integer number of cents",
      },
      {
        line_number: 69,
        reason:
          "transactionStatus 'ON_HOLD' is not one of the provider's values (SUCCESSFUL, PENDING, REJECTED)",
      },
    ]);
  });

  it('a report CSV with quoted commas and a header alone', async () => {
    const req: LoadRequest = { ...json('transactions.csv'), format: 'report-csv', queryType: 'TRANSACTION' };
    const summary = await loadReport(handle, req, fixture('report/transactions.csv'));
    expect(summary.status).toBe('committed');
    expect(summary.rowsRead).toBe(summary.rowsLoaded + summary.rowsRejected);
    const header = readFileSync(new URL('report/transactions.csv', FIXTURES), 'utf8').split('\n')[0]!;
    const quoted = `${header}\n2026-03-09T10:00:00Z,DEBIT,ORD-Q1,IBTQ1,100,CAD,SUCCESSFUL,PU-1,5,10001,Interactive,EFT,player-1,E1,"Declined, try again",CA,DESKTOP,EXT-Q1,IBT,C,ON\n`;
    const q = await loadReport(handle, { ...req, fileName: 'quoted.csv' }, text(quoted));
    expect(q).toMatchObject({ rowsRead: 1, rowsLoaded: 1 });
    const row = await handle.db
      .selectFrom('provider_transactions')
      .select(['error_message', 'fee_cents', 'device_type', 'request_type'])
      .where('transaction_id', '=', 'IBTQ1')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      error_message: 'Declined, try again',
      fee_cents: 5,
      device_type: 'DESKTOP',
      request_type: 'Interactive',
    });
    const headerOnly = await loadReport(handle, { ...req, fileName: 'header-only.csv' }, text(`${header}\n`));
    expect(headerOnly).toMatchObject({ status: 'committed', rowsRead: 0 });
  });

  it('a zipped return CSV (data descriptor) loads returns, keeping a next action date that is not a date raw', async () => {
    const req: LoadRequest = {
      ...json('returns-csv-data-descriptor.zip'),
      source: 'report-returns',
      format: 'report-csv',
      queryType: 'RETURN',
    };
    const summary = await loadReport(handle, req, fixture('report/returns-csv-data-descriptor.zip'));
    expect(summary).toMatchObject({
      status: 'committed',
      zipped: true,
      rowsRead: 3,
      rowsLoaded: 2,
      rowsRejected: 1,
    });
    const rows = await handle.db
      .selectFrom('provider_returns')
      .select([
        'return_transaction_id',
        'original_transaction_id',
        'amount_cents',
        'next_action_date',
        'raw_next_action_date',
        'source',
      ])
      .where('return_transaction_id', 'in', ['IBT2603200000009', 'IBT2603220000013'])
      .orderBy('return_transaction_id')
      .execute();
    expect(rows).toEqual([
      {
        return_transaction_id: 'IBT2603200000009',
        original_transaction_id: 'IBT2603080000001',
        amount_cents: 12550,
        next_action_date: '2026-03-27',
        raw_next_action_date: '2026-03-27',
        source: 'report-returns',
      },
      {
        return_transaction_id: 'IBT2603220000013',
        original_transaction_id: 'IBT2603020000005',
        amount_cents: 990,
        next_action_date: null,
        raw_next_action_date: 'N/A',
        source: 'report-returns',
      },
    ]);
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select(['line_number', 'reason'])
      .where('load_id', '=', summary.loadId)
      .execute();
    expect(rejected).toEqual([
      { line_number: 3, reason: 'expected 21 fields as in the header (line 1), found 20' },
    ]);
  });

  it('JSON broken half-way loads nothing and leaves the load failed', async () => {
    const before = await warehouseChecksum(handle.db);
    const good = readFileSync(new URL('report/transactions-and-returns.json', FIXTURES), 'utf8');
    const broken = good.slice(0, Math.floor(good.length / 2));
    const error = await loadReport(handle, json('broken.json'), text(broken)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreadableInput);
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const load = await lastLoad();
    expect(load).toMatchObject({
      status: 'failed',
      file_name: 'broken.json',
      rows_loaded: 0,
      rows_rejected: 0,
    });
    expect(load.error).toContain('UnreadableInput: broken.json');
  });

  it('a truncated ZIP loads nothing and leaves the load failed', async () => {
    const before = await warehouseChecksum(handle.db);
    const zip = readFileSync(new URL('report/transactions-and-returns.json.zip', FIXTURES));
    const error = await loadReport(
      handle,
      json('truncated.zip'),
      text(zip.subarray(0, zip.length - 40)),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreadableInput);
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const load = await lastLoad();
    expect(load).toMatchObject({ status: 'failed', zipped: true, file_name: 'truncated.zip' });
  });

  it('refuses a production file in a staging warehouse before writing anything', async () => {
    const loads = await count('loads');
    const error = await loadReport(
      handle,
      { ...legacy('5', 'prod.csv'), environment: 'production' },
      text(`${LINE}\n`),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvironmentMismatch);
    expect(await count('loads')).toBe(loads);
  });
});

describe('ledger files', () => {
  it('loads the CSV ledger with quoted commas and an unknown column, rejecting bad lines', async () => {
    const summary = await loadLedger(
      handle,
      { fileName: 'ledger.csv', origin: 'file', environment: 'staging' },
      fixture('ledger/ledger.csv'),
    );
    expect(summary).toMatchObject({ status: 'committed', rowsRead: 6, rowsLoaded: 3, rowsRejected: 3 });
    const entry = await handle.db
      .selectFrom('merchant_ledger')
      .selectAll()
      .where('merchant_transaction_id', '=', 'ORD-300001')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      description: 'Deposit, web cashier',
      amount_cents: 12550,
      booked_at: '2026-03-08 06:59:59.999999+00',
      load_id: summary.loadId,
    });
    const load = await lastLoad();
    expect(load).toMatchObject({ format: 'ledger-csv', source: 'ledger' });
  });

  it('loads the NDJSON ledger and records the changed entry in row_history', async () => {
    const summary = await loadLedger(
      handle,
      { fileName: 'ledger.ndjson', origin: 'file', environment: 'staging' },
      fixture('ledger/ledger.ndjson'),
    );
    expect(summary).toMatchObject({
      status: 'committed',
      rowsRead: 5,
      rowsLoaded: 2,
      rowsRejected: 3,
      rowsInserted: 0,
      rowsUpdated: 1,
      rowsUnchanged: 1,
    });
    const load = await lastLoad();
    expect(load.format).toBe('ledger-ndjson');
    const history = await handle.db
      .selectFrom('row_history')
      .selectAll()
      .where('table_name', '=', 'merchant_ledger')
      .execute();
    expect(history.map((h) => [h.row_key, h.changed_columns, h.load_id])).toEqual([
      ['PAY-400001', ['merchant_user_id', 'product', 'description'], summary.loadId],
    ]);
    expect(history[0]!.previous).toMatchObject({
      merchant_user_id: 'player-1204',
      product: 'IBT',
      description: 'Withdrawal',
    });
  });
});
