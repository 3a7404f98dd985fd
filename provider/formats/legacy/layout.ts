import type {
  AdjustmentRecord,
  LegacyTransactionRecord,
  ReportRecord,
  ReturnRecord,
} from '../../../domain/records.ts';
import { InvalidParseOption } from '../invalid-parse-option.ts';
import * as field from './fields.ts';
import type { FieldSpec } from './fields.ts';

/** The legacy CSV layouts (docs/provider-interface.md 4.4): fields, their sizes, the warehouse columns they fill, the field selection. */

/**
 * A transaction field: its size and label, the columns of legacy_transactions it fills, and how its
 * value is checked and put into them. The one table of the transaction layout: the record builder
 * (records.ts) and the columns a selection carries ({@link legacyColumns}) both read it.
 */
export interface TransactionField extends FieldSpec {
  readonly columns: readonly (keyof LegacyTransactionRecord)[];
  /** Checks `v`, the value of field `n` (this field), and sets its columns on `r`. */
  readonly read: (r: LegacyTransactionRecord, v: string, n: number, field: FieldSpec) => void;
}

/** Transaction report fields 1-22 of docs/provider-interface.md 4.4 (types 5 and 6). */
export const TRANSACTION_FIELDS: Readonly<Record<number, TransactionField>> = {
  1: {
    size: 8,
    label: 'transaction date',
    columns: ['transaction_on'],
    read: (r, v, n, f) => (r.transaction_on = field.date(n, f, v)),
  },
  2: {
    size: 1,
    label: 'transaction type',
    columns: ['raw_transaction_type'],
    read: (r, v) => (r.raw_transaction_type = v),
  },
  3: {
    size: 30,
    label: 'merchant transaction ID',
    columns: ['merchant_transaction_id'],
    read: (r, v) => (r.merchant_transaction_id = field.orNull(v)),
  },
  4: {
    size: 30,
    label: 'transaction ID',
    columns: ['transaction_id'],
    read: (r, v, n, f) => (r.transaction_id = field.nonEmpty(n, f, v)),
  },
  5: {
    size: 10,
    label: 'amount',
    columns: ['amount_cents'],
    read: (r, v, n, f) => (r.amount_cents = field.cents(n, f, v)),
  },
  6: {
    size: 3,
    label: 'currency',
    columns: ['currency'],
    read: (r, v, n, f) => (r.currency = field.currency(n, f, v)),
  },
  7: {
    size: 1,
    label: 'status',
    columns: ['status', 'raw_status'],
    read: (r, v) => {
      // docs/provider-interface.md 4.4: S is successful; any other value indicates a failed transaction.
      r.raw_status = v;
      r.status = v === 'S' ? 'SUCCESSFUL' : 'FAILED';
    },
  },
  8: {
    size: 30,
    label: 'internal user ID',
    columns: ['internal_user_id'],
    read: (r, v) => (r.internal_user_id = field.orNull(v)),
  },
  9: {
    size: 10,
    label: 'merchant fee',
    columns: ['fee_cents'],
    read: (r, v, n, f) => (r.fee_cents = v === '' ? null : field.cents(n, f, v)),
  },
  10: {
    size: 8,
    label: 'merchant account ID',
    columns: ['merchant_account_id'],
    read: (r, v) => (r.merchant_account_id = field.orNull(v)),
  },
  11: {
    size: 2,
    label: 'error code',
    columns: ['error_code'],
    read: (r, v) => (r.error_code = field.orNull(v)),
  },
  12: {
    size: 1,
    label: 'notification status',
    columns: ['raw_notify_status'],
    read: (r, v) => (r.raw_notify_status = field.orNull(v)),
  },
  13: {
    size: 20,
    label: 'merchant user ID',
    columns: ['merchant_user_id'],
    read: (r, v) => (r.merchant_user_id = field.orNull(v)),
  },
  14: {
    size: 6,
    label: 'transaction time',
    // The instant and its flag come from this field with field 1, once every field is read (records.ts).
    columns: ['raw_transaction_time', 'transaction_at', 'local_time_flag'],
    read: (r, v) => {
      if (v !== '' && !/^\d{6}$/.test(v)) {
        throw new field.FieldProblem(`field 14 (transaction time) '${v}' is not HHMMSS`);
      }
      r.raw_transaction_time = field.orNull(v);
    },
  },
  15: {
    size: 2,
    label: 'country code',
    columns: ['country_code'],
    read: (r, v, n, f) => (r.country_code = field.country(n, f, v)),
  },
  16: {
    size: 128,
    label: 'consumer e-mail',
    columns: ['consumer_email'],
    read: (r, v) => (r.consumer_email = field.orNull(v)),
  },
  17: {
    size: 32,
    label: 'bank account',
    columns: ['bank_account_masked'],
    read: (r, v, n, f) => (r.bank_account_masked = field.bankAccount(n, f, v)),
  },
  18: {
    size: 3,
    label: 'return code',
    columns: ['return_code'],
    read: (r, v) => (r.return_code = field.orNull(v)),
  },
  19: {
    size: 8,
    label: 'return date',
    columns: ['returned_on'],
    read: (r, v, n, f) => (r.returned_on = field.optionalDate(n, f, v)),
  },
  20: {
    size: 8,
    label: 'completion date',
    columns: ['completed_on'],
    read: (r, v, n, f) => (r.completed_on = field.optionalDate(n, f, v)),
  },
  21: {
    size: 13,
    label: 'payment type',
    columns: ['payment_type'],
    read: (r, v) => (r.payment_type = field.orNull(v)),
  },
  22: {
    size: 80,
    label: 'network reference',
    columns: ['network_reference'],
    read: (r, v) => (r.network_reference = field.orNull(v)),
  },
};

/** Return report fields (type 1). Sizes of 8 and 9 are not shown: no limit is imposed on them. */
export const RETURN_FIELDS: readonly FieldSpec[] = [
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
export const ADJUSTMENT_FIELDS: readonly FieldSpec[] = [
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
  'last_updated_on',
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

export const DEFAULT_FIELDS: Record<'5' | '6', readonly number[]> = {
  '5': range(1, 17),
  '6': range(1, 19),
};

/** Fields without which a legacy transaction cannot be stored (not-null columns of legacy_transactions). */
const REQUIRED_TRANSACTION_FIELDS = [1, 2, 4];

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
  for (const n of selection as readonly number[]) columns.push(...(TRANSACTION_FIELDS[n]?.columns ?? []));
  return { kind: 'legacy-transaction', columns };
}

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

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
