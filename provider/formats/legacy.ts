import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { impliedToCents } from '../../domain/money.ts';
import type {
  AdjustmentRecord,
  LegacyQueryType,
  LegacyTransactionRecord,
  OnColumns,
  ParsedRow,
  ReportRecord,
  ReturnRecord,
} from '../../domain/records.ts';
import { normaliseDate } from '../../domain/time/calendar.ts';
import { easternToUtc } from '../../domain/time/eastern.ts';
import { InvalidParseOption } from './invalid-parse-option.ts';
import { isBlank, readLines, splitCsvLine } from './read-lines.ts';

/**
 * Legacy query interface CSV (provider-api.md 2.10, 4.6): no header, one record per line, fields
 * separated by commas, Eastern dates and times, implied-decimal amounts.
 *
 * A record that does not validate (wrong number of fields, non-digit amount, impossible date, bad
 * currency, a field longer than its spec size) is yielded as a rejected row whose reason names the
 * field; it never stops the file. Blank lines carry no record and are skipped. Option errors (unknown
 * query type, bad `fields` selection) are thrown by the call itself, before anything is read.
 */

export interface LegacyOptions {
  readonly queryType: string | undefined;
  /** The `response_fields` selection, columns in the order listed (types 5 and 6 only). */
  readonly fields?: readonly number[] | undefined;
  readonly fileName: string;
  /** Told the columns the selection carries, before the first record. */
  readonly onColumns?: OnColumns | undefined;
}

interface FieldSpec {
  readonly size: number;
  readonly label: string;
}

/** Transaction report fields 1-22 of spec 2.10 (types 5 and 6). */
const TRANSACTION_FIELDS: Record<number, FieldSpec> = {
  1: { size: 8, label: 'transaction date' },
  2: { size: 1, label: 'transaction type' },
  3: { size: 30, label: 'merchant transaction ID' },
  4: { size: 30, label: 'transaction ID' },
  5: { size: 10, label: 'amount' },
  6: { size: 3, label: 'currency' },
  7: { size: 1, label: 'status' },
  8: { size: 30, label: 'internal user ID' },
  9: { size: 10, label: 'merchant fee' },
  10: { size: 8, label: 'merchant account ID' },
  11: { size: 2, label: 'error code' },
  12: { size: 1, label: 'notification status' },
  13: { size: 20, label: 'merchant user ID' },
  14: { size: 6, label: 'transaction time' },
  15: { size: 2, label: 'country code' },
  16: { size: 128, label: 'consumer e-mail' },
  17: { size: 32, label: 'bank account' },
  18: { size: 3, label: 'return code' },
  19: { size: 8, label: 'return date' },
  20: { size: 8, label: 'completion date' },
  21: { size: 13, label: 'payment type' },
  22: { size: 80, label: 'network reference' },
};

/** Return report fields (type 1). Sizes of 8 and 9 are not shown: no limit is imposed on them. */
const RETURN_FIELDS: readonly FieldSpec[] = [
  { size: 8, label: 'return date' },
  { size: 2, label: 'transaction category' },
  { size: 3, label: 'return code' },
  { size: 30, label: 'merchant transaction ID' },
  { size: 30, label: 'return transaction ID' },
  { size: 10, label: 'return amount' },
  { size: 3, label: 'currency' },
  { size: Number.POSITIVE_INFINITY, label: 'field 8 (meaning not shown)' },
  { size: Number.POSITIVE_INFINITY, label: 'field 9 (meaning not shown)' },
  { size: 30, label: 'original transaction ID' },
  { size: 20, label: 'merchant user ID' },
  { size: 2, label: 'country code' },
];

/** Adjustment report fields (type 4). */
const ADJUSTMENT_FIELDS: readonly FieldSpec[] = [
  { size: 8, label: 'transaction date' },
  { size: 1, label: 'transaction type' },
  { size: 1, label: 'adjustment type' },
  { size: 30, label: 'transaction ID' },
  { size: 10, label: 'amount' },
  { size: 3, label: 'currency' },
  { size: 10, label: 'merchant fee' },
  { size: 8, label: 'merchant account ID' },
  { size: 256, label: 'notes' },
];

/** The columns of legacy_transactions each transaction field fills (field 14 with field 1 gives the instant). */
const TRANSACTION_FIELD_COLUMNS: Record<number, readonly (keyof LegacyTransactionRecord)[]> = {
  1: ['transaction_on'],
  2: ['raw_transaction_type'],
  3: ['merchant_transaction_id'],
  4: ['transaction_id'],
  5: ['amount_cents'],
  6: ['currency'],
  7: ['status', 'raw_status'],
  8: ['internal_user_id'],
  9: ['fee_cents'],
  10: ['merchant_account_id'],
  11: ['error_code'],
  12: ['raw_notify_status'],
  13: ['merchant_user_id'],
  14: ['raw_transaction_time', 'transaction_at', 'local_time_flag'],
  15: ['country_code'],
  16: ['consumer_email'],
  17: ['bank_account_masked'],
  18: ['return_code'],
  19: ['returned_on'],
  20: ['completed_on'],
  21: ['payment_type'],
  22: ['network_reference'],
};

/** The columns of provider_returns a type 1 line fills (the others stay unknown). */
const RETURN_COLUMNS: readonly (keyof ReturnRecord)[] = [
  'return_transaction_id',
  'original_transaction_id',
  'merchant_transaction_id',
  'merchant_user_id',
  'return_code',
  'amount_cents',
  'currency',
  'returned_on',
  'raw_transaction_type',
  'country_code',
  'legacy_field_8',
  'legacy_field_9',
  'raw',
];

const ADJUSTMENT_COLUMNS: readonly (keyof AdjustmentRecord)[] = [
  'adjustment_key',
  'adjusted_on',
  'raw_transaction_type',
  'adjustment_type',
  'transaction_id',
  'amount_cents',
  'currency',
  'fee_cents',
  'merchant_account_id',
  'notes',
  'raw',
];

/**
 * The kind of record a legacy query type yields and the warehouse columns its lines carry: for types
 * 5 and 6 those of the fields selected (type 5 has no field 18 or 19, a `--fields` list only what it
 * lists). Throws as {@link legacySelection} does.
 */
export function legacyColumns(
  queryType: string | undefined,
  fields?: readonly number[],
): { kind: ReportRecord['kind']; columns: readonly string[] } {
  const selection = legacySelection(queryType, fields);
  if (queryType === '1') return { kind: 'return', columns: RETURN_COLUMNS };
  if (queryType === '4') return { kind: 'adjustment', columns: ADJUSTMENT_COLUMNS };
  const columns: string[] = ['query_type', 'raw'];
  for (const n of selection as readonly number[]) columns.push(...(TRANSACTION_FIELD_COLUMNS[n] ?? []));
  return { kind: 'legacy-transaction', columns };
}

const DEFAULT_FIELDS: Record<'5' | '6', readonly number[]> = {
  '5': range(1, 17),
  '6': range(1, 19),
};

/** Fields without which a legacy transaction cannot be stored (not-null columns of legacy_transactions). */
const REQUIRED_TRANSACTION_FIELDS = [1, 2, 4];

const CURRENCY = /^[A-Z]{3}$/;

/** Rejection of one field; caught per row and turned into a rejected row. */
class FieldProblem extends Error {}

/**
 * Checks the query type and the `fields` selection and returns the selection in force.
 * @throws InvalidParseOption for an unknown query type, a selection with duplicates, unknown field
 *   numbers, field 19 for type 5, fields for types 1/4, or a selection lacking fields 1, 2 or 4.
 */
export function legacySelection(
  queryType: string | undefined,
  fields?: readonly number[],
): readonly number[] | null {
  if (queryType !== '1' && queryType !== '4' && queryType !== '5' && queryType !== '6') {
    throw new InvalidParseOption(
      `legacy query type '${queryType ?? ''}' is not supported; use --query-type 1 (returns), 4 (adjustments), 5 or 6 (transactions)`,
    );
  }
  if (queryType === '1' || queryType === '4') {
    if (fields !== undefined && fields.length > 0) {
      throw new InvalidParseOption(
        `--fields applies only to legacy query types 5 and 6 (response_fields); query type ${queryType} has a fixed layout`,
      );
    }
    return null;
  }
  if (fields === undefined || fields.length === 0) return DEFAULT_FIELDS[queryType];
  const seen = new Set<number>();
  for (const f of fields) {
    if (!Number.isInteger(f) || TRANSACTION_FIELDS[f] === undefined) {
      throw new InvalidParseOption(`--fields: '${f}' is not a legacy transaction field number (1-22)`);
    }
    if (seen.has(f)) throw new InvalidParseOption(`--fields: field ${f} is listed twice`);
    if (f === 19 && queryType === '5') {
      throw new InvalidParseOption(
        '--fields: field 19 (return date) is not valid for query type 5 (spec 4.6)',
      );
    }
    seen.add(f);
  }
  const missing = REQUIRED_TRANSACTION_FIELDS.filter((f) => !seen.has(f));
  if (missing.length > 0) {
    throw new InvalidParseOption(
      `--fields must include fields 1 (date), 2 (type) and 4 (transaction ID) to identify a record; missing ${missing.join(', ')}`,
    );
  }
  return fields;
}

/**
 * Parses a legacy CSV (query type 1, 4, 5 or 6) into normalised records.
 * @throws InvalidParseOption at call time for bad options (see {@link legacySelection}).
 * @throws UnreadableInput while iterating only when the stream is not line-oriented text.
 */
export function parseLegacy(
  input: Readable | AsyncIterable<Buffer | string>,
  options: LegacyOptions,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const selection = legacySelection(options.queryType, options.fields);
  const queryType = options.queryType as LegacyQueryType;
  const parseRow = rowParser(queryType, selection);
  const carried = legacyColumns(queryType, options.fields);
  options.onColumns?.(carried.kind, carried.columns);
  return iterate(input, options.fileName, parseRow);
}

async function* iterate(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
  parseRow: (raw: string, line: number) => ParsedRow<ReportRecord>,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  for await (const batch of readLines(input, fileName)) {
    const { lines, first } = batch;
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] as string;
      if (isBlank(raw)) continue;
      yield parseRow(raw, first + i);
    }
  }
}

/** Builds the function that turns one line into a parsed row, for a query type and field selection. */
export function rowParser(
  queryType: LegacyQueryType,
  selection: readonly number[] | null,
): (raw: string, line: number) => ParsedRow<ReportRecord> {
  const build =
    queryType === '1'
      ? returnRecord
      : queryType === '4'
        ? adjustmentRecord
        : transactionRecord(queryType, selection as readonly number[]);
  return (raw, line) => {
    try {
      return { ok: true, line, raw, record: build(raw) };
    } catch (error) {
      if (error instanceof FieldProblem) return { ok: false, line, raw, reason: error.message };
      throw error;
    }
  };
}

function split(raw: string): string[] {
  const fields = splitCsvLine(raw);
  if (fields === null) throw new FieldProblem('unbalanced double quote in the line');
  return fields;
}

function checkCount(fields: string[], expected: number, what: string): void {
  if (fields.length !== expected) {
    throw new FieldProblem(`expected ${expected} fields (${what}), found ${fields.length}`);
  }
}

function checkSize(n: number, spec: FieldSpec, value: string): void {
  if (value.length > spec.size) {
    throw new FieldProblem(
      `field ${n} (${spec.label}) is ${value.length} characters long; the limit is ${spec.size}`,
    );
  }
}

function nonEmpty(n: number, spec: FieldSpec, value: string): string {
  if (value === '') throw new FieldProblem(`field ${n} (${spec.label}) is empty`);
  return value;
}

function orNull(value: string): string | null {
  return value === '' ? null : value;
}

function date(n: number, spec: FieldSpec, value: string): string {
  if (!/^\d{8}$/.test(value)) throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not YYYYMMDD`);
  try {
    return normaliseDate(value);
  } catch {
    throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not a date that exists`);
  }
}

function optionalDate(n: number, spec: FieldSpec, value: string): string | null {
  return value === '' ? null : date(n, spec, value);
}

function cents(n: number, spec: FieldSpec, value: string, signed = false): number {
  try {
    return impliedToCents(value, { signed });
  } catch (error) {
    throw new FieldProblem(`field ${n} (${spec.label}): ${(error as Error).message}`);
  }
}

function currency(n: number, spec: FieldSpec, value: string): string {
  if (!CURRENCY.test(value)) {
    throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not three uppercase letters (ISO 4217)`);
  }
  return value;
}

function transactionRecord(
  queryType: '5' | '6',
  selection: readonly number[],
): (raw: string) => LegacyTransactionRecord {
  const specs = selection.map((n) => TRANSACTION_FIELDS[n] as FieldSpec);
  const what =
    selection === DEFAULT_FIELDS[queryType]
      ? `query type ${queryType}, fields ${selection[0]}-${selection[selection.length - 1]}`
      : `query type ${queryType}, fields ${selection.join(',')}`;
  return (raw) => {
    const values = split(raw);
    checkCount(values, selection.length, what);
    const r: LegacyTransactionRecord = {
      kind: 'legacy-transaction',
      transaction_id: '',
      transaction_on: '',
      raw_transaction_type: '',
      merchant_transaction_id: null,
      amount_cents: null,
      currency: null,
      status: null,
      raw_status: null,
      internal_user_id: null,
      fee_cents: null,
      merchant_account_id: null,
      error_code: null,
      raw_notify_status: null,
      merchant_user_id: null,
      raw_transaction_time: null,
      transaction_at: null,
      local_time_flag: null,
      country_code: null,
      consumer_email: null,
      bank_account_masked: null,
      return_code: null,
      returned_on: null,
      completed_on: null,
      payment_type: null,
      network_reference: null,
      query_type: queryType,
      raw,
    };
    for (let i = 0; i < selection.length; i++) {
      const n = selection[i] as number;
      const spec = specs[i] as FieldSpec;
      const v = values[i] as string;
      checkSize(n, spec, v);
      switch (n) {
        case 1:
          r.transaction_on = date(n, spec, v);
          break;
        case 2:
          r.raw_transaction_type = v;
          break;
        case 3:
          r.merchant_transaction_id = orNull(v);
          break;
        case 4:
          r.transaction_id = nonEmpty(n, spec, v);
          break;
        case 5:
          r.amount_cents = cents(n, spec, v);
          break;
        case 6:
          r.currency = currency(n, spec, v);
          break;
        case 7:
          // Spec 2.10: S is successful; any other value indicates a failed transaction.
          r.raw_status = v;
          r.status = v === 'S' ? 'SUCCESSFUL' : 'FAILED';
          break;
        case 8:
          r.internal_user_id = orNull(v);
          break;
        case 9:
          r.fee_cents = v === '' ? null : cents(n, spec, v);
          break;
        case 10:
          r.merchant_account_id = orNull(v);
          break;
        case 11:
          r.error_code = orNull(v);
          break;
        case 12:
          r.raw_notify_status = orNull(v);
          break;
        case 13:
          r.merchant_user_id = orNull(v);
          break;
        case 14:
          if (v !== '' && !/^\d{6}$/.test(v)) {
            throw new FieldProblem(`field 14 (transaction time) '${v}' is not HHMMSS`);
          }
          r.raw_transaction_time = orNull(v);
          break;
        case 15:
          r.country_code = orNull(v);
          break;
        case 16:
          r.consumer_email = orNull(v);
          break;
        case 17:
          r.bank_account_masked = orNull(v);
          break;
        case 18:
          r.return_code = orNull(v);
          break;
        case 19:
          r.returned_on = optionalDate(n, spec, v);
          break;
        case 20:
          r.completed_on = optionalDate(n, spec, v);
          break;
        case 21:
          r.payment_type = orNull(v);
          break;
        case 22:
          r.network_reference = orNull(v);
          break;
      }
    }
    if (r.raw_transaction_time !== null) {
      try {
        const at = easternToUtc(r.transaction_on, r.raw_transaction_time);
        r.transaction_at = at.utc;
        r.local_time_flag = at.flag;
      } catch (error) {
        throw new FieldProblem(`field 14 (transaction time): ${(error as Error).message}`);
      }
    }
    return r;
  };
}

function returnRecord(raw: string): ReturnRecord {
  const v = split(raw);
  checkCount(v, RETURN_FIELDS.length, 'query type 1 returns, fields 1-12');
  for (let i = 0; i < v.length; i++) checkSize(i + 1, RETURN_FIELDS[i] as FieldSpec, v[i] as string);
  const f = (n: number) => v[n - 1] as string;
  const s = (n: number) => RETURN_FIELDS[n - 1] as FieldSpec;
  return {
    kind: 'return',
    return_transaction_id: nonEmpty(5, s(5), f(5)),
    original_transaction_id: orNull(f(10)),
    merchant_transaction_id: orNull(f(4)),
    merchant_id: null,
    merchant_user_id: orNull(f(11)),
    product_user_id: null,
    product: null,
    return_code: orNull(f(3)),
    amount_cents: cents(6, s(6), f(6)),
    currency: currency(7, s(7), f(7)),
    returned_on: date(1, s(1), f(1)),
    next_action_date: null,
    raw_next_action_date: null,
    settlement_code: null,
    raw_transaction_type: orNull(f(2)),
    original_transaction_type: null,
    original_transaction_at: null,
    original_external_reference: null,
    external_reference: null,
    notify_status: null,
    region: null,
    country_code: orNull(f(12)),
    // Fields 8 and 9: meaning not shown by the provider, kept raw (column comments).
    legacy_field_8: orNull(f(8)),
    legacy_field_9: orNull(f(9)),
    raw,
  };
}

function adjustmentRecord(raw: string): AdjustmentRecord {
  let v = split(raw);
  if (v.length < ADJUSTMENT_FIELDS.length) {
    checkCount(v, ADJUSTMENT_FIELDS.length, 'query type 4 adjustments, fields 1-9');
  }
  // Field 9 (notes) is the last field and free text: unquoted commas in it belong to it.
  if (v.length > ADJUSTMENT_FIELDS.length) v = [...v.slice(0, 8), v.slice(8).join(',')];
  for (let i = 0; i < v.length; i++) {
    // The size of the signed amounts (5, 7) counts their digits: a leading '-' comes on top.
    const value = v[i] as string;
    checkSize(i + 1, ADJUSTMENT_FIELDS[i] as FieldSpec, i === 4 || i === 6 ? value.replace(/^-/, '') : value);
  }
  const f = (n: number) => v[n - 1] as string;
  const s = (n: number) => ADJUSTMENT_FIELDS[n - 1] as FieldSpec;
  const fields = {
    adjusted_on: date(1, s(1), f(1)),
    raw_transaction_type: orNull(f(2)),
    adjustment_type: orNull(f(3)),
    transaction_id: orNull(f(4)),
    amount_cents: cents(5, s(5), f(5), true),
    currency: currency(6, s(6), f(6)),
    fee_cents: f(7) === '' ? null : cents(7, s(7), f(7), true),
    merchant_account_id: orNull(f(8)),
    notes: orNull(f(9)),
  };
  return { kind: 'adjustment', adjustment_key: adjustmentKey(fields), ...fields, raw };
}

/**
 * SHA-256 (hex) of an adjustment's normalised fields, in a fixed order. The loader appends `#n`, the
 * occurrence among identical rows of one report, because the provider gives adjustments no key.
 */
export function adjustmentKey(fields: Omit<AdjustmentRecord, 'kind' | 'adjustment_key' | 'raw'>): string {
  const canonical = JSON.stringify([
    fields.adjusted_on,
    fields.raw_transaction_type,
    fields.adjustment_type,
    fields.transaction_id,
    fields.amount_cents,
    fields.currency,
    fields.fee_cents,
    fields.merchant_account_id,
    fields.notes,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
