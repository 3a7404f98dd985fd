import { UnreadableInput } from '../../domain/errors.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { returnColumns, transactionColumns } from '../../domain/record-columns.ts';
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

type Get = (column: string) => string;

/**
 * A CSV column of a report: the record columns it fills (a file carries those of the columns in its
 * header, and `raw`; the record's other columns are unknown, not empty) and how its value `v`, of
 * CSV column `c`, is checked and set on them.
 */
interface CsvField<R> {
  readonly fills: readonly (keyof R)[];
  readonly read: (r: R, v: string, c: string) => void;
}

/** Text kept as written into one column; empty is unknown (null). */
function text<R>(column: keyof R): CsvField<R> {
  return { fills: [column], read: (r, v) => ((r as Record<keyof R, unknown>)[column] = v === '' ? null : v) };
}

/** A value checked by `check` (which names the CSV column in its FieldProblem) into one column. */
function checked<R, K extends keyof R>(column: K, check: (c: string, v: string) => R[K]): CsvField<R> {
  return { fills: [column], read: (r, v, c) => (r[column] = check(c, v)) };
}

interface Layout<R> {
  readonly columns: readonly string[];
  readonly required: readonly string[];
  /**
   * Every CSV column, checked in this order (the first problem of a row is the one it is rejected
   * with): the one table of the layout, which the record builder and the carried columns both read.
   */
  readonly fields: Readonly<Record<string, CsvField<R>>>;
  /** The record with every column unknown, its keys in the order `recon parse` prints them. */
  readonly unknown: R;
}

/** A record of `kind` whose `columns` are all unknown (null), with `raw` last. */
function unknownRecord<R extends { kind: string }>(kind: R['kind'], columns: readonly string[]): R {
  return { kind, ...Object.fromEntries(columns.map((c) => [c, null])), raw: '' } as unknown as R;
}

const TRANSACTION: Layout<TransactionRecord> = {
  columns: TRANSACTION_CSV_HEADER,
  required: [
    'Transaction Date',
    'Transaction Type',
    'Transaction ID',
    'Transaction Amount',
    'Currency',
    'Transaction Status',
  ],
  fields: {
    'Transaction Type': {
      fills: ['transaction_type', 'raw_transaction_type'],
      read: (r, v, c) => {
        r.raw_transaction_type = requiredText(c, v);
        r.transaction_type = transactionType(r.raw_transaction_type);
      },
    },
    'Transaction Status': {
      fills: ['status', 'raw_status'],
      read: (r, v, c) => {
        r.raw_status = requiredText(c, v);
        r.status = reportStatus(r.raw_status);
      },
    },
    'Transaction Date': {
      // The instant is given in UTC: no Eastern wall time, so no DST flag (local_time_flag null).
      fills: ['transaction_at', 'transaction_on', 'local_time_flag'],
      read: (r, v, c) => {
        r.transaction_at = instant(c, v);
        r.transaction_on = easternDateOf(r.transaction_at);
      },
    },
    'Transaction ID': checked('transaction_id', requiredText),
    'Transaction Amount': checked('amount_cents', csvCents),
    'Transaction Fee': checked('fee_cents', optionalCsvCents),
    Currency: checked('currency', currencyOf),
    'Merchant Transaction ID': text('merchant_transaction_id'),
    'Internal User ID': text('product_user_id'),
    'Merchant ID': text('merchant_id'),
    'Request Type': text('request_type'),
    'Payment Method': text('payment_method'),
    'Merchant User ID': text('merchant_user_id'),
    'Error Code': text('error_code'),
    'Error Description': text('error_message'),
    Country: text('country_code'),
    'Device Type': text('device_type'),
    'External Reference': text('external_reference'),
    Product: text('product'),
    'Payment Notification Status': text('notify_status'),
    'Payment Region': text('region'),
  } satisfies Record<(typeof TRANSACTION_CSV_HEADER)[number], CsvField<TransactionRecord>>,
  unknown: unknownRecord<TransactionRecord>('transaction', Object.keys(transactionColumns)),
};

/** The columns of a return as every parser builds it: the three dates of its sources beside returned_on. */
function returnOrder(): string[] {
  const dates = ['report_date', 'settlement_date', 'last_updated_on'];
  const columns = Object.keys(returnColumns).filter((c) => !dates.includes(c));
  columns.splice(columns.indexOf('returned_on') + 1, 0, ...dates);
  return columns;
}

/** A column of the return report that no record column keeps. */
const NOT_KEPT: CsvField<ReturnRecord> = { fills: [], read: () => {} };

const RETURN: Layout<ReturnRecord> = {
  columns: RETURN_CSV_HEADER,
  required: ['Settlement Transaction ID', 'Settlement Amount', 'Currency'],
  // No original transaction type nor original external reference (the JSON report has them).
  fields: {
    'Next Action Date': {
      fills: ['next_action_date', 'raw_next_action_date'],
      read: (r, v, c) => {
        const next = nextActionDate(c, v);
        r.next_action_date = next.date;
        r.raw_next_action_date = next.raw;
      },
    },
    'Settlement Date': {
      fills: ['returned_on', 'settlement_date'],
      read: (r, v, c) => (r.returned_on = r.settlement_date = optionalDate(c, v)),
    },
    'Settlement Transaction ID': checked('return_transaction_id', requiredText),
    'Settlement Amount': checked('amount_cents', csvCents),
    Currency: checked('currency', currencyOf),
    'Payment Transaction Date': checked('original_transaction_at', optionalInstant),
    'Settlement Code': text('settlement_code'),
    'Return Code': text('return_code'),
    'Merchant Transaction ID': text('merchant_transaction_id'),
    'Transaction Type': text('raw_transaction_type'),
    'Merchant ID': text('merchant_id'),
    'Request Type': NOT_KEPT,
    Country: text('country_code'),
    'Device Type': NOT_KEPT,
    'Merchant User ID': text('merchant_user_id'),
    'External Reference': text('external_reference'),
    'Payment Transaction ID': text('original_transaction_id'),
    Product: text('product'),
    'Internal User ID': text('product_user_id'),
    'Payment Notification Status': text('notify_status'),
    'Payment Region': text('region'),
  } satisfies Record<(typeof RETURN_CSV_HEADER)[number], CsvField<ReturnRecord>>,
  unknown: unknownRecord<ReturnRecord>('return', returnOrder()),
};

/** The record of one CSV row: each of the layout's `fields` read in order, the other columns unknown. */
function readRecord<R>(
  unknown: R,
  fields: readonly (readonly [string, CsvField<R>])[],
  get: Get,
  raw: string,
): R {
  const r = { ...unknown, raw };
  for (const [column, field] of fields) field.read(r, get(column), column);
  return r;
}

/**
 * The CSV columns of the warehouse columns whose forms are checked (provider/formats/field-forms.ts),
 * read off the transaction layout: the return report names those it has the same way.
 */
const CSV_NAMES: FieldNames = Object.fromEntries(
  Object.entries(TRANSACTION.fields).flatMap(([column, field]) => field.fills.map((c) => [c, column])),
) as Record<keyof TransactionRecord, string>;

function normaliseName(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase();
}

async function* iterate(
  input: AsyncIterable<Buffer | string>,
  queryType: 'TRANSACTION' | 'RETURN',
  fileName: string,
  onColumns: OnColumns | undefined,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const layout = (queryType === 'TRANSACTION' ? TRANSACTION : RETURN) as Layout<
    TransactionRecord | ReturnRecord
  >;
  const fields = Object.entries(layout.fields);
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
          const carried = [
            'raw',
            ...[...index.keys()].flatMap((column) => layout.fields[column]?.fills ?? []),
          ];
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
        const record = readRecord(layout.unknown, fields, get, rec.raw) as TransactionRecord | ReturnRecord;
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
  layout: Pick<Layout<unknown>, 'columns' | 'required'>,
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
