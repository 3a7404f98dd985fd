import { UnreadableInput } from '../../domain/errors.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import type {
  OnColumns,
  ParsedRow,
  ReportRecord,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';
import { InvalidParseOption } from './invalid-parse-option.ts';
import { type FieldNames, reportRecordProblem } from './field-forms.ts';
import { readCsvRecords, rejectedRecord } from './read-csv-records.ts';
import { describeHeader } from '../../domain/privacy.ts';
import { RETURN_CSV_HEADER, TRANSACTION_CSV_HEADER } from './report-csv-headers.ts';
import {
  csvCents,
  currencyOf,
  FieldProblem,
  instant,
  nextActionDate,
  optionalCsvCents,
  optionalDate,
  optionalInstant,
  reportStatus,
  requiredText,
  transactionType,
} from './report-fields.ts';

/**
 * CSV report of the JSON report endpoint (docs/provider-interface.md 4.2). Columns are matched by header name
 * (case and surrounding spaces ignored), so their order does not matter; an unknown column is kept in
 * `raw` and otherwise ignored; a missing required column throws UnreadableInput naming it.
 *
 * Formats the spec does not show, and what is accepted:
 * - Transaction Date / Payment Transaction Date: ISO-8601, with or without a fraction (up to six
 *   digits, kept to the microsecond), `Z` or an offset; a value without a zone is UTC (docs/provider-interface.md 4.1 says
 *   report times are UTC).
 * - Amounts and fees: whole cents as digits, as in the JSON report (`150000` is 1500.00).
 * - Settlement Date: `YYYY-MM-DD` or `YYYYMMDD`. Next Action Date: kept raw, and as a date when it is one.
 *
 * A row whose field count differs from the header's (the spec warns the sample return rows do not line
 * up) is a rejected row with the reason; the load goes on. A header alone yields nothing; an empty file
 * throws UnreadableInput (the endpoint always sends the header).
 */
export function parseReportCsv(
  input: AsyncIterable<Buffer | string>,
  options: { queryType: string | undefined; fileName: string; onColumns?: OnColumns | undefined },
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const queryType = options.queryType;
  if (queryType !== 'TRANSACTION' && queryType !== 'RETURN') {
    throw new InvalidParseOption(
      `report-csv needs --query-type TRANSACTION or RETURN (got '${queryType ?? ''}'): the two reports have different columns`,
    );
  }
  return iterate(input, queryType, options.fileName, options.onColumns);
}

type Mapper<R> = (get: (column: string) => string, raw: string) => R;

interface Layout<R> {
  readonly columns: readonly string[];
  /**
   * The warehouse columns each CSV column fills: a file carries those of the columns in its header
   * (and `raw`); the record's other columns are unknown, not empty.
   */
  readonly carries: Readonly<Record<string, readonly string[]>>;
  readonly required: readonly string[];
  readonly map: Mapper<R>;
}

const TRANSACTION: Layout<TransactionRecord> = {
  columns: TRANSACTION_CSV_HEADER,
  carries: {
    // The instant is given in UTC: no Eastern wall time, so no DST flag (local_time_flag null).
    'Transaction Date': ['transaction_at', 'transaction_on', 'local_time_flag'],
    'Transaction Type': ['transaction_type', 'raw_transaction_type'],
    'Merchant Transaction ID': ['merchant_transaction_id'],
    'Transaction ID': ['transaction_id'],
    'Transaction Amount': ['amount_cents'],
    Currency: ['currency'],
    'Transaction Status': ['status', 'raw_status'],
    'Internal User ID': ['product_user_id'],
    'Transaction Fee': ['fee_cents'],
    'Merchant ID': ['merchant_id'],
    'Request Type': ['request_type'],
    'Payment Method': ['payment_method'],
    'Merchant User ID': ['merchant_user_id'],
    'Error Code': ['error_code'],
    'Error Description': ['error_message'],
    Country: ['country_code'],
    'Device Type': ['device_type'],
    'External Reference': ['external_reference'],
    Product: ['product'],
    'Payment Notification Status': ['notify_status'],
    'Payment Region': ['region'],
  } satisfies Record<(typeof TRANSACTION_CSV_HEADER)[number], readonly (keyof TransactionRecord)[]>,
  required: [
    'Transaction Date',
    'Transaction Type',
    'Transaction ID',
    'Transaction Amount',
    'Currency',
    'Transaction Status',
  ],
  map: (get, raw) => {
    const rawType = requiredText('Transaction Type', get('Transaction Type'));
    const rawStatus = requiredText('Transaction Status', get('Transaction Status'));
    const at = instant('Transaction Date', get('Transaction Date'));
    return {
      kind: 'transaction',
      transaction_id: requiredText('Transaction ID', get('Transaction ID')),
      merchant_id: text(get('Merchant ID')),
      merchant_transaction_id: text(get('Merchant Transaction ID')),
      merchant_user_id: text(get('Merchant User ID')),
      product_user_id: text(get('Internal User ID')),
      product: text(get('Product')),
      transaction_type: transactionType(rawType),
      raw_transaction_type: rawType,
      status: reportStatus(rawStatus),
      raw_status: rawStatus,
      amount_cents: csvCents('Transaction Amount', get('Transaction Amount')),
      fee_cents: optionalCsvCents('Transaction Fee', get('Transaction Fee')),
      currency: currencyOf('Currency', get('Currency')),
      transaction_at: at,
      transaction_on: easternDateOf(at),
      local_time_flag: null,
      error_code: text(get('Error Code')),
      error_message: text(get('Error Description')),
      notify_status: text(get('Payment Notification Status')),
      region: text(get('Payment Region')),
      country_code: text(get('Country')),
      payment_method: text(get('Payment Method')),
      external_reference: text(get('External Reference')),
      device_type: text(get('Device Type')),
      request_type: text(get('Request Type')),
      raw,
    };
  },
};

const RETURN: Layout<ReturnRecord> = {
  columns: RETURN_CSV_HEADER,
  // No original transaction type nor original external reference (the JSON report has them).
  carries: {
    'Settlement Date': ['returned_on', 'settlement_date'],
    'Settlement Code': ['settlement_code'],
    'Return Code': ['return_code'],
    'Merchant Transaction ID': ['merchant_transaction_id'],
    'Settlement Transaction ID': ['return_transaction_id'],
    'Settlement Amount': ['amount_cents'],
    'Next Action Date': ['next_action_date', 'raw_next_action_date'],
    'Transaction Type': ['raw_transaction_type'],
    'Merchant ID': ['merchant_id'],
    'Request Type': [],
    Country: ['country_code'],
    Currency: ['currency'],
    'Device Type': [],
    'Merchant User ID': ['merchant_user_id'],
    'External Reference': ['external_reference'],
    'Payment Transaction Date': ['original_transaction_at'],
    'Payment Transaction ID': ['original_transaction_id'],
    Product: ['product'],
    'Internal User ID': ['product_user_id'],
    'Payment Notification Status': ['notify_status'],
    'Payment Region': ['region'],
  } satisfies Record<(typeof RETURN_CSV_HEADER)[number], readonly (keyof ReturnRecord)[]>,
  required: ['Settlement Transaction ID', 'Settlement Amount', 'Currency'],
  map: (get, raw) => {
    const next = nextActionDate('Next Action Date', get('Next Action Date'));
    const settlementDate = optionalDate('Settlement Date', get('Settlement Date'));
    return {
      kind: 'return',
      return_transaction_id: requiredText('Settlement Transaction ID', get('Settlement Transaction ID')),
      original_transaction_id: text(get('Payment Transaction ID')),
      merchant_transaction_id: text(get('Merchant Transaction ID')),
      merchant_id: text(get('Merchant ID')),
      merchant_user_id: text(get('Merchant User ID')),
      product_user_id: text(get('Internal User ID')),
      product: text(get('Product')),
      return_code: text(get('Return Code')),
      amount_cents: csvCents('Settlement Amount', get('Settlement Amount')),
      currency: currencyOf('Currency', get('Currency')),
      returned_on: settlementDate,
      report_date: null,
      settlement_date: settlementDate,
      last_updated_on: null,
      next_action_date: next.date,
      raw_next_action_date: next.raw,
      settlement_code: text(get('Settlement Code')),
      raw_transaction_type: text(get('Transaction Type')),
      original_transaction_type: null,
      original_transaction_at: optionalInstant('Payment Transaction Date', get('Payment Transaction Date')),
      original_external_reference: null,
      external_reference: text(get('External Reference')),
      notify_status: text(get('Payment Notification Status')),
      region: text(get('Payment Region')),
      country_code: text(get('Country')),
      legacy_field_8: null,
      legacy_field_9: null,
      raw,
    };
  },
};

/**
 * The CSV columns of the warehouse columns whose forms are checked (provider/formats/field-forms.ts):
 * the same names in both reports.
 */
const CSV_NAMES: FieldNames = {
  merchant_transaction_id: 'Merchant Transaction ID',
  merchant_id: 'Merchant ID',
  merchant_user_id: 'Merchant User ID',
  country_code: 'Country',
  region: 'Payment Region',
  notify_status: 'Payment Notification Status',
  raw_transaction_type: 'Transaction Type',
  raw_status: 'Transaction Status',
};

function text(value: string): string | null {
  return value === '' ? null : value;
}

function normaliseName(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase();
}

async function* iterate(
  input: AsyncIterable<Buffer | string>,
  queryType: 'TRANSACTION' | 'RETURN',
  fileName: string,
  onColumns: OnColumns | undefined,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const layout: Layout<ReportRecord> = queryType === 'TRANSACTION' ? TRANSACTION : RETURN;
  let index: Map<string, number> | null = null;
  let headerLine = 0;
  let width = 0;
  let values: string[] = [];
  const get = (column: string): string => {
    const i = (index as Map<string, number>).get(column);
    return i === undefined ? '' : (values[i] as string);
  };
  for await (const batch of readCsvRecords(input, fileName)) {
    for (const rec of batch) {
      if (index === null) {
        if (rec.fields === null)
          throw new UnreadableInput(fileName, rec.line, 'the header row has malformed quoting');
        index = headerIndex(rec.fields, layout, queryType, fileName, rec.line);
        headerLine = rec.line;
        if (onColumns) {
          const carried = ['raw', ...[...index.keys()].flatMap((column) => layout.carries[column] ?? [])];
          onColumns(queryType === 'TRANSACTION' ? 'transaction' : 'return', carried);
        }
        width = rec.fields.length;
        continue;
      }
      if (rec.fields === null) {
        yield rejectedRecord(
          rec,
          'malformed quoting (a double quote inside an unquoted field, or text after a closing quote)',
        );
        continue;
      }
      if (rec.fields.length !== width) {
        yield rejectedRecord(
          rec,
          `expected ${width} fields as in the header (line ${headerLine}), found ${rec.fields.length}`,
        );
        continue;
      }
      values = rec.fields;
      try {
        const record = layout.map(get, rec.raw) as TransactionRecord | ReturnRecord;
        const problem = reportRecordProblem(record, CSV_NAMES);
        yield problem === null
          ? { ok: true, line: rec.line, raw: rec.raw, record }
          : rejectedRecord(rec, problem);
      } catch (error) {
        if (!(error instanceof FieldProblem)) throw error;
        yield rejectedRecord(rec, error.message);
      }
    }
  }
  if (index === null) {
    throw new UnreadableInput(
      fileName,
      null,
      `the file is empty: a ${queryType} CSV report starts with its header row`,
    );
  }
}

/** Maps known column names (in their spec spelling) to their position in this file's header. */
function headerIndex(
  header: string[],
  layout: Layout<ReportRecord>,
  queryType: string,
  fileName: string,
  line: number,
): Map<string, number> {
  const positions = new Map<string, number>();
  header.forEach((name, i) => {
    const key = normaliseName(name);
    if (!positions.has(key)) positions.set(key, i);
  });
  const index = new Map<string, number>();
  for (const column of layout.columns) {
    const i = positions.get(normaliseName(column));
    if (i !== undefined) index.set(column, i);
  }
  const missing = layout.required.filter((c) => !index.has(c));
  if (missing.length > 0) {
    throw new UnreadableInput(
      fileName,
      line,
      `the ${queryType} CSV header lacks required column${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')} (${describeHeader(header, (name) => layout.columns.some((c) => normaliseName(c) === normaliseName(name)))}); is --query-type right?`,
    );
  }
  return index;
}
