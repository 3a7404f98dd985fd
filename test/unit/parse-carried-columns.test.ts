import { describe, expect, it } from 'vitest';
import {
  LEGACY_DEFAULT_FIELDS,
  legacyReturnLine,
  legacyTransactionLine,
} from '../../sandbox/formats/legacy-csv.ts';
import { reportCsvChunks } from '../../sandbox/formats/report-csv.ts';
import { reportJsonChunks, transactionToJson } from '../../sandbox/formats/report-json.ts';
import { parseLedger, parseReport, type ParseReportOptions } from '../../provider/formats/index.ts';
import type { ReportRecord } from '../../domain/records.ts';
import { legacyTransaction, returnRecord, transaction } from '../support/ingest-records.ts';
import { collect, records, streamOf } from '../support/parse-helpers.ts';

// What a parser reports as carried (onColumns) is what it fills: every column it does not report is
// null in every record (the loader keeps the stored value there), and every column it reports is
// filled from a record whose fields are all set (a column reported but never read would null it).

async function text(chunks: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const c of chunks) out += c;
  return out;
}

async function parseWithColumns(data: string, o: Omit<ParseReportOptions, 'fileName' | 'onColumns'>) {
  const carried = new Map<string, readonly string[]>();
  const rows = records(
    await collect(
      parseReport(streamOf(data, 64), {
        ...o,
        fileName: 'x',
        onColumns: (kind, columns) => carried.set(kind, columns),
      }),
    ),
  );
  return { rows, carried };
}

/** Columns that are null even when every field is set: derived flags. */
const DERIVED_NULL = new Set(['local_time_flag']);

function expectCarriedIsFilled(rows: ReportRecord[], carried: Map<string, readonly string[]>) {
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) {
    const columns = carried.get(r.kind);
    expect(columns, `columns of ${r.kind}`).toBeDefined();
    const set = new Set(columns);
    const entries = Object.entries(r).filter(([k]) => k !== 'kind');
    const filledButNotCarried = entries.filter(([k, v]) => v !== null && !set.has(k)).map(([k]) => k);
    const carriedButNull = entries.filter(([k, v]) => v === null && set.has(k) && !DERIVED_NULL.has(k));
    expect(filledButNotCarried).toEqual([]);
    expect(carriedButNull.map(([k]) => k)).toEqual([]);
    expect([...set].filter((c) => !(c in r))).toEqual([]);
  }
}

const fullTransaction = transaction({
  device_type: 'MOBILE',
  request_type: 'Interactive',
  error_code: 'E1',
  error_message: 'Declined',
});
const fullReturn = returnRecord({ legacy_field_8: 'A', legacy_field_9: 'B' });
// Legacy type 1 writes raw_transaction_type as its two-character category.
const fullLegacyReturn = { ...fullReturn, raw_transaction_type: '04' };
const fullLegacy = legacyTransaction({
  transaction_on: '2026-03-10',
  raw_transaction_time: '093000',
  error_code: '12',
  return_code: '901',
  returned_on: '2026-03-12',
  completed_on: '2026-03-13',
  payment_type: 'EFT',
  network_reference: 'NR1',
});

describe('parsers report the columns they carry', () => {
  it('JSON report: no device or request type, returns without legacy fields 8 and 9', async () => {
    const data = await text(reportJsonChunks([fullTransaction, fullReturn]));
    const { rows, carried } = await parseWithColumns(data, { format: 'report-json' });
    expectCarriedIsFilled(rows, carried);
    expect(carried.get('transaction')).not.toContain('device_type');
    expect(carried.get('return')).toContain('original_transaction_type');
    expect(carried.get('return')).not.toContain('legacy_field_8');
  });

  it('JSON report whose elements have deviceType and requestType: carried', async () => {
    const element = {
      ...transactionToJson(fullTransaction),
      deviceType: 'MOBILE',
      requestType: 'Interactive',
    };
    const { rows, carried } = await parseWithColumns(JSON.stringify([element]), { format: 'report-json' });
    expectCarriedIsFilled(rows, carried);
    expect(carried.get('transaction')).toContain('device_type');
  });

  it('CSV report: transactions with device and request type, returns without original type and reference', async () => {
    const tx = await parseWithColumns(await text(reportCsvChunks('TRANSACTION', [fullTransaction])), {
      format: 'report-csv',
      queryType: 'TRANSACTION',
    });
    expectCarriedIsFilled(tx.rows, tx.carried);
    expect(tx.carried.get('transaction')).toContain('device_type');
    const rt = await parseWithColumns(await text(reportCsvChunks('RETURN', [fullReturn])), {
      format: 'report-csv',
      queryType: 'RETURN',
    });
    expectCarriedIsFilled(rt.rows, rt.carried);
    expect(rt.carried.get('return')).not.toContain('original_transaction_type');
    expect(rt.carried.get('return')).not.toContain('original_external_reference');
  });

  it('CSV report: a column missing from the header is not carried', async () => {
    const data =
      'Transaction Date,Transaction Type,Transaction ID,Transaction Amount,Currency,Transaction Status\n2026-03-09T10:00:00Z,DEBIT,T1,100,CAD,SUCCESSFUL\n';
    const { rows, carried } = await parseWithColumns(data, {
      format: 'report-csv',
      queryType: 'TRANSACTION',
    });
    expectCarriedIsFilled(rows, carried);
    expect([...carried.get('transaction')!].sort()).toEqual(
      [
        'amount_cents',
        'currency',
        'local_time_flag',
        'raw',
        'raw_status',
        'raw_transaction_type',
        'status',
        'transaction_at',
        'transaction_id',
        'transaction_on',
        'transaction_type',
      ].sort(),
    );
  });

  it.each([
    ['5', undefined],
    ['6', undefined],
    ['6', Array.from({ length: 22 }, (_, i) => i + 1)],
    ['5', [1, 2, 4, 9]],
    ['6', [4, 1, 2, 14, 18]],
  ] as const)('legacy type %s, fields %j', async (queryType, fields) => {
    const line = legacyTransactionLine(fullLegacy, fields ?? LEGACY_DEFAULT_FIELDS[queryType]);
    const { rows, carried } = await parseWithColumns(line, {
      format: 'legacy',
      queryType,
      fields: fields ? [...fields] : undefined,
    });
    expectCarriedIsFilled(rows, carried);
  });

  it('legacy type 1 returns', async () => {
    const { rows, carried } = await parseWithColumns(legacyReturnLine(fullLegacyReturn), {
      format: 'legacy',
      queryType: '1',
    });
    expectCarriedIsFilled(rows, carried);
  });

  it('merchant ledger: the optional columns the CSV header or some NDJSON object has', async () => {
    const columns = async (data: string) => {
      let carried: readonly string[] = [];
      await collect(parseLedger(streamOf(data, 16), { fileName: 'l', onColumns: (_k, c) => (carried = c) }));
      return carried;
    };
    const required = [
      'merchant_transaction_id',
      'transaction_type',
      'amount_cents',
      'currency',
      'status',
      'booked_at',
    ];
    const line = 'M1,DEBIT,100,CAD,SUCCESSFUL,2026-03-08T07:31:00Z';
    expect(await columns(`${required.join(',')}\n${line}\n`)).toEqual(required);
    expect(await columns(`${required.join(',')},description\n${line},x\n`)).toEqual([
      ...required,
      'description',
    ]);
    const o = {
      merchant_transaction_id: 'M1',
      transaction_type: 'DEBIT',
      amount_cents: 100,
      currency: 'CAD',
      status: 'SUCCESSFUL',
      booked_at: '2026-03-08T07:31:00Z',
    };
    expect(
      await columns(
        `${JSON.stringify(o)}\n${JSON.stringify({ ...o, merchant_transaction_id: 'M2', fee_cents: null })}\n`,
      ),
    ).toEqual([...required, 'fee_cents']);
  });
});
