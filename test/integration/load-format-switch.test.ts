import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import {
  LEGACY_DEFAULT_FIELDS,
  legacyReturnLine,
  legacyTransactionLine,
} from '../../sandbox/formats/legacy-csv.ts';
import { reportCsvChunks } from '../../sandbox/formats/report-csv.ts';
import { reportJsonChunks } from '../../sandbox/formats/report-json.ts';
import { zipSingleEntry } from '../../sandbox/formats/zip-writer.ts';
import type { LegacyTransactionRecord, ReturnRecord, TransactionRecord } from '../../domain/records.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  legacyTransaction,
  returnRecord,
  rowHistoryOf,
  transaction,
  warehouseChecksum,
} from '../support/ingest-records.ts';

// The same data pulled in another format is not a restatement: a column that the incoming format does
// not carry (JSON: device and request type; CSV: original transaction type and external reference;
// legacy type 5: return code and date; a --fields list: what it leaves out) keeps its stored value.
// Written with the sandbox's own format writers and read back through the real parsers.

const handle = useTestDatabase();

type Kind = 'transactions' | 'returns';
interface Format {
  readonly name: string;
  readonly format: 'report-json' | 'report-csv';
  readonly zipped: boolean;
}
const FORMATS: readonly Format[] = [
  { name: 'JSON', format: 'report-json', zipped: false },
  { name: 'JSON zipped', format: 'report-json', zipped: true },
  { name: 'CSV', format: 'report-csv', zipped: false },
  { name: 'CSV zipped', format: 'report-csv', zipped: true },
];

async function collect(chunks: AsyncIterable<string | Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(parts);
}

/** The report file of `records` in format `f`, as the sandbox serves it. */
function reportFile(f: Format, kind: Kind, records: (TransactionRecord | ReturnRecord)[]) {
  const text =
    f.format === 'report-json'
      ? reportJsonChunks(records)
      : reportCsvChunks(kind === 'transactions' ? 'TRANSACTION' : 'RETURN', records);
  return collect(
    f.zipped ? zipSingleEntry(`report.${f.format === 'report-json' ? 'json' : 'csv'}`, text) : text,
  );
}

let files = 0;
async function loadBytes(req: Omit<LoadRequest, 'fileName' | 'origin' | 'environment'>, bytes: Buffer) {
  const summary = await loadReport(
    handle,
    { ...req, fileName: `file-${++files}`, origin: 'pull', environment: 'staging' },
    Readable.from([bytes]),
  );
  expect(summary.status).toBe('committed');
  const rejected = await handle.db
    .selectFrom('rejected_rows')
    .select('reason')
    .where('load_id', '=', summary.loadId)
    .execute();
  expect(rejected).toEqual([]);
  return summary;
}

async function loadReportFile(f: Format, kind: Kind, records: (TransactionRecord | ReturnRecord)[]) {
  return loadBytes(
    {
      source: kind === 'transactions' ? 'report-transactions' : 'report-returns',
      format: f.format,
      queryType: f.format === 'report-csv' ? (kind === 'transactions' ? 'TRANSACTION' : 'RETURN') : undefined,
    },
    await reportFile(f, kind, records),
  );
}

/** What a load restated, without the stored versions (the tests compare the rest whole). */
async function historyOf(load: LoadSummary) {
  const history = await rowHistoryOf(handle.db, load.loadId);
  return history.map(({ table_name, row_key, changed_columns }) => ({
    table_name,
    row_key,
    changed_columns,
  }));
}

/** A load that restated nothing: no row inserted or updated, no row_history row. */
async function expectNoRestatement(load: LoadSummary, rows: number) {
  expect(load).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: rows });
  expect(await historyOf(load)).toEqual([]);
}

function transactions(prefix: string): TransactionRecord[] {
  return [
    transaction({
      transaction_id: `${prefix}-T1`,
      device_type: 'MOBILE',
      request_type: 'Interactive',
      error_code: 'E1',
      error_message: 'Declined, try again',
    }),
    transaction({
      transaction_id: `${prefix}-T2`,
      device_type: 'DESKTOP',
      request_type: null,
      fee_cents: null,
    }),
    transaction({
      transaction_id: `${prefix}-T3`,
      device_type: null,
      request_type: null,
      status: 'PENDING',
      raw_status: 'PENDING',
    }),
  ];
}

function returns(prefix: string): ReturnRecord[] {
  return [
    returnRecord({ return_transaction_id: `${prefix}-R1` }),
    returnRecord({
      return_transaction_id: `${prefix}-R2`,
      original_transaction_type: 'CREDIT',
      original_external_reference: null,
      next_action_date: null,
      raw_next_action_date: 'N/A',
    }),
    returnRecord({
      return_transaction_id: `${prefix}-R3`,
      original_transaction_type: null,
      original_external_reference: null,
    }),
  ];
}

/** The names of a row's unknown columns (decoded from its unknown_mask), as `unknown_columns`. */
const unknownColumns = (table: string) =>
  sql<string[] | null>`unknown_column_names(${table}::regclass, unknown_mask)`.as('unknown_columns');

async function formatColumns(kind: Kind, prefix: string) {
  if (kind === 'transactions') {
    return handle.db
      .selectFrom('provider_transactions')
      .select([
        'transaction_id as id',
        'device_type as a',
        'request_type as b',
        unknownColumns('provider_transactions'),
      ])
      .where('transaction_id', 'like', `${prefix}-%`)
      .orderBy('transaction_id')
      .execute();
  }
  return handle.db
    .selectFrom('provider_returns')
    .select([
      'return_transaction_id as id',
      'original_transaction_type as a',
      'original_external_reference as b',
      'external_reference as c',
      unknownColumns('provider_returns'),
    ])
    .where('return_transaction_id', 'like', `${prefix}-%`)
    .orderBy('return_transaction_id')
    .execute();
}

/** The format-dependent columns as stored once `loaded` formats were loaded. */
function expectedFormatColumns(kind: Kind, records: (TransactionRecord | ReturnRecord)[], loaded: Format[]) {
  const carriedBy = kind === 'transactions' ? 'report-csv' : 'report-json';
  const known = loaded.some((f) => f.format === carriedBy);
  const csvLoaded = loaded.some((f) => f.format === 'report-csv');
  return records.map((r) =>
    r.kind === 'transaction'
      ? {
          id: r.transaction_id,
          a: known ? r.device_type : null,
          b: known ? r.request_type : null,
          unknown_columns: known ? null : ['device_type', 'request_type'],
        }
      : {
          id: r.return_transaction_id,
          a: known ? r.original_transaction_type : null,
          b: known ? r.original_external_reference : null,
          // A JSON return has no external reference of its own (issue 25 section 5): the CSV fills it.
          c: csvLoaded ? r.external_reference : null,
          // No report format carries legacy fields 8 and 9.
          unknown_columns: [
            ...(known ? [] : ['original_transaction_type', 'original_external_reference']),
            ...(csvLoaded ? [] : ['external_reference']),
            'legacy_field_8',
            'legacy_field_9',
            // Each format carries its own date of the return; none of the reports carries legacy's.
            ...(known ? [] : ['report_date']),
            ...(csvLoaded ? [] : ['settlement_date']),
            'last_updated_on',
          ],
        },
  );
}

const PAIRS = FORMATS.flatMap((a) => FORMATS.filter((b) => b !== a).map((b) => [a, b] as const));

describe('the same report in another format is not a restatement', () => {
  for (const kind of ['transactions', 'returns'] as const) {
    describe(kind, () => {
      it.each(PAIRS.map(([a, b]) => [a.name, b.name, a, b] as const))(
        '%s, then %s, then each again: 0 updated, no row_history, nothing nulled',
        async (_a, _b, a, b) => {
          const prefix = `${kind}-${a.name}-${b.name}`.replaceAll(' ', '_');
          const records = kind === 'transactions' ? transactions(prefix) : returns(prefix);

          expect(await loadReportFile(a, kind, records)).toMatchObject({ rowsInserted: 3, rowsUpdated: 0 });
          expect(await formatColumns(kind, prefix)).toEqual(expectedFormatColumns(kind, records, [a]));

          await expectNoRestatement(await loadReportFile(b, kind, records), 3);
          const both = expectedFormatColumns(kind, records, [a, b]);
          expect(await formatColumns(kind, prefix)).toEqual(both);

          // Every switch after that changes no warehouse row at all.
          const settled = await warehouseChecksum(handle.db);
          await expectNoRestatement(await loadReportFile(a, kind, records), 3);
          await expectNoRestatement(await loadReportFile(b, kind, records), 3);
          expect(await warehouseChecksum(handle.db)).toEqual(settled);
          expect(await formatColumns(kind, prefix)).toEqual(both);
        },
      );
    });
  }
});

describe('a real restatement in another format is still one', () => {
  it.each(PAIRS.filter(([a, b]) => a.format !== b.format).map(([a, b]) => [a.name, b.name, a, b] as const))(
    'transactions, %s then %s with a changed status: 1 updated, history names the status only',
    async (_a, _b, a, b) => {
      const prefix = `restated-tx-${a.name}-${b.name}`.replaceAll(' ', '_');
      const records = transactions(prefix);
      await loadReportFile(a, 'transactions', records);
      const restated = records.map((r, i) =>
        i === 0 ? { ...r, status: 'REJECTED' as const, raw_status: 'REJECTED' } : r,
      );
      const load = await loadReportFile(b, 'transactions', restated);
      expect(load).toMatchObject({ rowsInserted: 0, rowsUpdated: 1, rowsUnchanged: 2 });
      expect(await historyOf(load)).toEqual([
        {
          table_name: 'provider_transactions',
          row_key: `${prefix}-T1`,
          changed_columns: ['status', 'raw_status'],
        },
      ]);
      const row = await handle.db
        .selectFrom('provider_transactions')
        .select(['status', 'device_type', 'request_type', 'load_id'])
        .where('transaction_id', '=', `${prefix}-T1`)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({
        status: 'REJECTED',
        device_type: 'MOBILE',
        request_type: 'Interactive',
        load_id: load.loadId,
      });
    },
  );

  it.each(PAIRS.filter(([a, b]) => a.format !== b.format).map(([a, b]) => [a.name, b.name, a, b] as const))(
    'returns, %s then %s with a changed amount: 1 updated, history names the amount only',
    async (_a, _b, a, b) => {
      const prefix = `restated-rt-${a.name}-${b.name}`.replaceAll(' ', '_');
      const records = returns(prefix);
      await loadReportFile(a, 'returns', records);
      const restated = records.map((r, i) => (i === 0 ? { ...r, amount_cents: 1999 } : r));
      const load = await loadReportFile(b, 'returns', restated);
      expect(load).toMatchObject({ rowsInserted: 0, rowsUpdated: 1, rowsUnchanged: 2 });
      expect(await historyOf(load)).toEqual([
        { table_name: 'provider_returns', row_key: `${prefix}-R1`, changed_columns: ['amount_cents'] },
      ]);
      const row = await handle.db
        .selectFrom('provider_returns')
        .select(['amount_cents', 'original_transaction_type', 'original_external_reference'])
        .where('return_transaction_id', '=', `${prefix}-R1`)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({
        amount_cents: 1999,
        original_transaction_type: 'DEBIT',
        original_external_reference: 'X1',
      });
    },
  );
});

describe('carried and empty is not the same as not carried', () => {
  const csv = FORMATS[2]!;
  const json = FORMATS[0]!;

  it('a CSV that sends the device type empty restates it to null; JSON then keeps the null', async () => {
    const records = transactions('emptied');
    await loadReportFile(csv, 'transactions', records);
    const emptied = records.map((r, i) => (i === 0 ? { ...r, device_type: null } : r));
    const load = await loadReportFile(csv, 'transactions', emptied);
    expect(load).toMatchObject({ rowsUpdated: 1 });
    expect(await historyOf(load)).toEqual([
      { table_name: 'provider_transactions', row_key: 'emptied-T1', changed_columns: ['device_type'] },
    ]);
    await expectNoRestatement(await loadReportFile(json, 'transactions', records), 3);
    const row = await handle.db
      .selectFrom('provider_transactions')
      .select(['device_type', 'request_type', unknownColumns('provider_transactions')])
      .where('transaction_id', '=', 'emptied-T1')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ device_type: null, request_type: 'Interactive', unknown_columns: null });
  });

  it('a CSV whose header lacks a column does not carry it: the stored value stays', async () => {
    const records = transactions('no-device-column');
    await loadReportFile(csv, 'transactions', records);
    const full = (await reportFile(csv, 'transactions', records)).toString('utf8');
    // Drop the Device Type column (the 17th): no field of these rows holds a quoted comma before it.
    const withoutDevice = full
      .split('\n')
      .map((line) => {
        if (line === '') return line;
        const fields = line.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.slice(0, 21);
        fields.splice(16, 1);
        return fields.join('').replace(/,$/, '');
      })
      .join('\n');
    expect(withoutDevice.split('\n')[0]).not.toContain('Device Type');
    const load = await loadBytes(
      { source: 'report-transactions', format: 'report-csv', queryType: 'TRANSACTION' },
      Buffer.from(withoutDevice),
    );
    await expectNoRestatement(load, 3);
    const rows = await formatColumns('transactions', 'no-device-column');
    expect(rows.map((r) => r.a)).toEqual(['MOBILE', 'DESKTOP', null]);
  });
});

describe('legacy transactions: type 5, type 6 and a --fields subset', () => {
  const SUBSET = [1, 2, 4, 5, 6, 7, 14];
  const NO_AMOUNT = [1, 2, 4, 7];

  function legacyRecords(prefix: string): LegacyTransactionRecord[] {
    return [
      legacyTransaction({
        transaction_id: `${prefix}-L1`,
        transaction_on: '2026-03-10',
        raw_transaction_time: '093000',
        return_code: '901',
        returned_on: '2026-03-12',
      }),
      legacyTransaction({
        transaction_id: `${prefix}-L2`,
        transaction_on: '2026-03-10',
        raw_transaction_time: '101500',
        status: 'FAILED',
        raw_status: 'F',
        error_code: '12',
      }),
    ];
  }

  function loadLegacy(
    queryType: '5' | '6',
    fields: readonly number[] | undefined,
    records: LegacyTransactionRecord[],
  ) {
    const lines = records
      .map((r) => legacyTransactionLine(r, fields ?? LEGACY_DEFAULT_FIELDS[queryType]))
      .join('');
    return loadBytes(
      {
        source: 'legacy-transactions',
        format: 'legacy',
        queryType,
        fields: fields ? [...fields] : undefined,
      },
      Buffer.from(lines),
    );
  }

  const VARIANTS = [
    { name: 'type 5', queryType: '5', fields: undefined },
    { name: 'type 6', queryType: '6', fields: undefined },
    { name: 'type 5 --fields 1,2,4,5,6,7,14', queryType: '5', fields: SUBSET },
    { name: 'type 6 --fields 1,2,4,7', queryType: '6', fields: NO_AMOUNT },
  ] as const;
  const LEGACY_PAIRS = VARIANTS.flatMap((a) => VARIANTS.filter((b) => b !== a).map((b) => [a, b] as const));

  it.each(LEGACY_PAIRS.map(([a, b], i) => [a.name, b.name, a, b, i] as const))(
    '%s, then %s, then each again: 0 updated, no row_history, nothing nulled',
    async (_a, _b, a, b, i) => {
      // Field 4 holds at most 30 characters.
      const prefix = `legacy-${i}`;
      const records = legacyRecords(prefix);
      expect(await loadLegacy(a.queryType, a.fields, records)).toMatchObject({ rowsInserted: 2 });
      await expectNoRestatement(await loadLegacy(b.queryType, b.fields, records), 2);
      const settled = await warehouseChecksum(handle.db);
      await expectNoRestatement(await loadLegacy(a.queryType, a.fields, records), 2);
      await expectNoRestatement(await loadLegacy(b.queryType, b.fields, records), 2);
      expect(await warehouseChecksum(handle.db)).toEqual(settled);

      // Each column holds the value of the last load that carried it; none was nulled by a load that
      // did not.
      const carried = (v: (typeof VARIANTS)[number], n: number) =>
        (v.fields ?? LEGACY_DEFAULT_FIELDS[v.queryType]).includes(n as never);
      const either = (n: number) => carried(a, n) || carried(b, n);
      const legacy = await handle.db
        .selectFrom('legacy_transactions')
        .select([
          'transaction_id',
          'amount_cents',
          'fee_cents',
          'return_code',
          'returned_on',
          'consumer_email',
        ])
        .where('transaction_id', '=', `${prefix}-L1`)
        .executeTakeFirstOrThrow();
      expect(legacy).toEqual({
        transaction_id: `${prefix}-L1`,
        amount_cents: either(5) ? 2015 : null,
        fee_cents: either(9) ? 25 : null,
        return_code: either(18) ? '901' : null,
        returned_on: either(19) ? '2026-03-12' : null,
        consumer_email: either(16) ? 'a@example.com' : null,
      });
      // The projection into provider_transactions follows: present once amount, currency and status
      // were known, and never nulled.
      const provider = await handle.db
        .selectFrom('provider_transactions')
        .select(['amount_cents', 'fee_cents', 'status', 'source'])
        .where('transaction_id', '=', `${prefix}-L1`)
        .executeTakeFirst();
      expect(provider).toEqual(
        either(5)
          ? {
              amount_cents: 2015,
              fee_cents: either(9) ? 25 : null,
              status: 'SUCCESSFUL',
              source: 'legacy-transactions',
            }
          : undefined,
      );
    },
  );

  it('a changed status in a --fields subset is a restatement, projected without nulling the amount', async () => {
    const records = legacyRecords('restated');
    await loadLegacy('5', undefined, records);
    const failed = records.map((r, i) =>
      i === 0 ? { ...r, status: 'FAILED' as const, raw_status: 'F' } : r,
    );
    const load = await loadLegacy('6', NO_AMOUNT, failed);
    expect(load).toMatchObject({ rowsInserted: 0, rowsUpdated: 1, rowsUnchanged: 1 });
    expect(await historyOf(load)).toEqual([
      {
        table_name: 'legacy_transactions',
        row_key: 'restated-L1',
        changed_columns: ['status', 'raw_status'],
      },
      {
        table_name: 'provider_transactions',
        row_key: 'restated-L1',
        changed_columns: ['status', 'raw_status'],
      },
    ]);
    const provider = await handle.db
      .selectFrom('provider_transactions')
      .select(['status', 'raw_status', 'amount_cents', 'currency', 'fee_cents', 'load_id'])
      .where('transaction_id', '=', 'restated-L1')
      .executeTakeFirstOrThrow();
    expect(provider).toEqual({
      status: 'FAILED',
      raw_status: 'F',
      amount_cents: 2015,
      currency: 'CAD',
      fee_cents: 25,
      load_id: load.loadId,
    });
    const n = await sql<{ n: number }>`select count(*)::int as n from provider_transactions
      where transaction_id like 'restated-L%'`.execute(handle.db);
    expect(n.rows[0]!.n).toBe(2);
  });
});

describe('merchant ledger: a file without the optional columns does not null them', () => {
  const HEADER = 'merchant_transaction_id,transaction_type,amount_cents,currency,status,booked_at';
  const OPTIONAL =
    'transaction_id,original_merchant_transaction_id,merchant_user_id,product,fee_cents,description';
  const full = (p: string, status = 'PENDING') =>
    `${HEADER},${OPTIONAL}\n${p}-1,DEBIT,2015,CAD,SUCCESSFUL,2026-03-08T07:31:00Z,T1,,U1,IBT,25,first\n${p}-2,CREDIT,500,CAD,${status},2026-03-08T08:00:00Z,T2,,U2,IBT,,\n`;
  const lean = (p: string, status = 'PENDING') =>
    `${HEADER}\n${p}-1,DEBIT,2015,CAD,SUCCESSFUL,2026-03-08T07:31:00Z\n${p}-2,CREDIT,500,CAD,${status},2026-03-08T08:00:00Z\n`;
  const ndjson = (p: string) =>
    [
      {
        merchant_transaction_id: `${p}-1`,
        transaction_type: 'DEBIT',
        amount_cents: 2015,
        currency: 'CAD',
        status: 'SUCCESSFUL',
        booked_at: '2026-03-08T07:31:00Z',
      },
      {
        merchant_transaction_id: `${p}-2`,
        transaction_type: 'CREDIT',
        amount_cents: 500,
        currency: 'CAD',
        status: 'PENDING',
        booked_at: '2026-03-08T08:00:00Z',
      },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n');
  const ledger = async (text: string) => {
    const summary = await loadLedger(
      handle,
      { fileName: `ledger-${++files}`, origin: 'file', environment: 'staging' },
      Readable.from([Buffer.from(text)]),
    );
    expect(summary).toMatchObject({ status: 'committed', rowsRejected: 0 });
    return summary;
  };
  const optional = (p: string) =>
    handle.db
      .selectFrom('merchant_ledger')
      .select(['merchant_transaction_id', 'transaction_id', 'fee_cents', 'description', 'status'])
      .where('merchant_transaction_id', 'like', `${p}-%`)
      .orderBy('merchant_transaction_id')
      .execute();
  const FULL_ROWS = (p: string, status = 'PENDING') => [
    {
      merchant_transaction_id: `${p}-1`,
      transaction_id: 'T1',
      fee_cents: 25,
      description: 'first',
      status: 'SUCCESSFUL',
    },
    { merchant_transaction_id: `${p}-2`, transaction_id: 'T2', fee_cents: null, description: null, status },
  ];

  it('full CSV, then CSV and NDJSON without them, then full again: 0 updated, values kept', async () => {
    expect(await ledger(full('LGA'))).toMatchObject({ rowsInserted: 2 });
    await expectNoRestatement(await ledger(lean('LGA')), 2);
    await expectNoRestatement(await ledger(ndjson('LGA')), 2);
    await expectNoRestatement(await ledger(full('LGA')), 2);
    expect(await optional('LGA')).toEqual(FULL_ROWS('LGA'));
  });

  it('without them first, then full: filled in, no restatement', async () => {
    await ledger(lean('LGB'));
    await expectNoRestatement(await ledger(full('LGB')), 2);
    expect(await optional('LGB')).toEqual(FULL_ROWS('LGB'));
  });

  it('a changed status in a file without the optional columns is a restatement', async () => {
    await ledger(full('LGC'));
    const load = await ledger(lean('LGC', 'SUCCESSFUL'));
    expect(load).toMatchObject({ rowsUpdated: 1 });
    expect(await historyOf(load)).toEqual([
      { table_name: 'merchant_ledger', row_key: 'LGC-2', changed_columns: ['status'] },
    ]);
    expect(await optional('LGC')).toEqual(FULL_ROWS('LGC', 'SUCCESSFUL'));
  });
});

describe('precedence: a report row taking over a legacy row replaces it whole', () => {
  /** A provider row without its key, lineage and raw line, unknown columns by name. */
  async function providerRow(table: 'provider_transactions' | 'provider_returns', key: string, id: string) {
    const r = await sql<{ row: Record<string, unknown> }>`select to_jsonb(t) - ${key} - 'raw' - 'load_id'
        - 'first_load_id' - 'created_at' - 'updated_at' - 'unknown_mask'
        || jsonb_build_object('unknown', unknown_column_names(${table}::regclass, unknown_mask)) as row
      from ${sql.table(table)} t where ${sql.ref(key)} = ${id}`.execute(handle.db);
    return r.rows[0]!.row;
  }

  it('returns: legacy type 1 then report, or report then legacy, end the same', async () => {
    const legacyLine = (id: string) =>
      legacyReturnLine(
        returnRecord({
          return_transaction_id: id,
          raw_transaction_type: '04',
          legacy_field_8: 'A',
          legacy_field_9: 'B',
        }),
      );
    const loadLegacyReturn = (id: string) =>
      loadBytes({ source: 'legacy-returns', format: 'legacy', queryType: '1' }, Buffer.from(legacyLine(id)));
    const report = (id: string) =>
      loadReportFile(FORMATS[2]!, 'returns', [returnRecord({ return_transaction_id: id })]);

    await loadLegacyReturn('PRE-R1');
    const takeover = await report('PRE-R1');
    expect(takeover).toMatchObject({ rowsUpdated: 1 });
    const [history] = await historyOf(takeover);
    expect(history!.changed_columns).toEqual(
      expect.arrayContaining(['source', 'legacy_field_8', 'legacy_field_9']),
    );
    await report('PRE-R2');
    await expectNoRestatement(await loadLegacyReturn('PRE-R2'), 1);

    const first = await providerRow('provider_returns', 'return_transaction_id', 'PRE-R1');
    expect(first).toMatchObject({ source: 'report-returns', legacy_field_8: null, legacy_field_9: null });
    expect(first.unknown).toEqual([
      'original_transaction_type',
      'original_external_reference',
      'legacy_field_8',
      'legacy_field_9',
      // The CSV report carries its Settlement Date only; the takeover drops legacy's last-updated date.
      'report_date',
      'last_updated_on',
    ]);
    expect(await providerRow('provider_returns', 'return_transaction_id', 'PRE-R2')).toEqual(first);
  });

  it('transactions: legacy type 5 then report JSON, or JSON then legacy, end the same', async () => {
    const legacyLoad = (id: string) =>
      loadBytes(
        { source: 'legacy-transactions', format: 'legacy', queryType: '5' },
        Buffer.from(
          legacyTransactionLine(
            legacyTransaction({
              transaction_id: id,
              transaction_on: '2026-03-10',
              raw_transaction_time: '093000',
            }),
            LEGACY_DEFAULT_FIELDS['5'],
          ),
        ),
      );
    const report = (id: string) =>
      loadReportFile(FORMATS[0]!, 'transactions', [
        transaction({ transaction_id: id, device_type: 'MOBILE' }),
      ]);
    await legacyLoad('PRE-T1');
    await report('PRE-T1');
    await report('PRE-T2');
    await legacyLoad('PRE-T2');
    const first = await providerRow('provider_transactions', 'transaction_id', 'PRE-T1');
    expect(first).toMatchObject({ source: 'report-transactions', device_type: null, local_time_flag: null });
    expect(first.unknown).toEqual(['device_type', 'request_type']);
    expect(await providerRow('provider_transactions', 'transaction_id', 'PRE-T2')).toEqual(first);
  });
});
