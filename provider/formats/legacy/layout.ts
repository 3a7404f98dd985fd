import type {
  AdjustmentRecord,
  LegacyTransactionRecord,
  ReportRecord,
  ReturnRecord,
} from '../../../domain/records.ts';
import { returnColumns } from '../../../domain/record-columns.ts';
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

/** How a field's value `v` becomes its column's value: checked, or a FieldProblem naming field `n`. */
type Check<T> = (n: number, spec: FieldSpec, v: string) => T;

/** The value as written, kept raw (empty included). */
const asWritten: Check<string> = (_n, _spec, v) => v;
/** Free text: empty is unknown (null). */
const text: Check<string | null> = (_n, _spec, v) => field.orNull(v);

/** A field of one column: its size, its label, the column, and how its value is checked. */
function one<K extends keyof LegacyTransactionRecord>(
  size: number,
  label: string,
  column: K,
  check: Check<LegacyTransactionRecord[K]>,
): TransactionField {
  return { size, label, columns: [column], read: (r, v, n, f) => (r[column] = check(n, f, v)) };
}

/** Transaction report fields 1-22 of docs/provider-interface.md 4.4 (types 5 and 6). */
export const TRANSACTION_FIELDS: Readonly<Record<number, TransactionField>> = {
  1: one(8, 'transaction date', 'transaction_on', field.date),
  2: one(1, 'transaction type', 'raw_transaction_type', asWritten),
  3: one(30, 'merchant transaction ID', 'merchant_transaction_id', text),
  4: one(30, 'transaction ID', 'transaction_id', field.nonEmpty),
  5: one(10, 'amount', 'amount_cents', field.cents),
  6: one(3, 'currency', 'currency', field.currency),
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
  8: one(30, 'internal user ID', 'internal_user_id', text),
  9: one(10, 'merchant fee', 'fee_cents', field.optionalCents),
  10: one(8, 'merchant account ID', 'merchant_account_id', text),
  11: one(2, 'error code', 'error_code', text),
  12: one(1, 'notification status', 'raw_notify_status', text),
  13: one(20, 'merchant user ID', 'merchant_user_id', text),
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
  15: one(2, 'country code', 'country_code', field.country),
  16: one(128, 'consumer e-mail', 'consumer_email', text),
  17: one(32, 'bank account', 'bank_account_masked', field.bankAccount),
  18: one(3, 'return code', 'return_code', text),
  19: one(8, 'return date', 'returned_on', field.optionalDate),
  20: one(8, 'completion date', 'completed_on', field.optionalDate),
  21: one(13, 'payment type', 'payment_type', text),
  22: one(80, 'network reference', 'network_reference', text),
};

/** A fixed layout's fields in order, each from its label and its size. */
function fieldsInOrder(sizes: Readonly<Record<string, number>>): readonly FieldSpec[] {
  return Object.entries(sizes).map(([label, size]) => ({ size, label }));
}

/** Return report fields (type 1). Sizes of 8 and 9 are not shown: no limit is imposed on them. */
export const RETURN_FIELDS = fieldsInOrder({
  'return date': 8,
  'transaction category': 2,
  'return code': 3,
  'merchant transaction ID': 30,
  'return transaction ID': 30,
  'return amount': 10,
  currency: 3,
  'field 8 (meaning not shown)': Number.POSITIVE_INFINITY,
  'field 9 (meaning not shown)': Number.POSITIVE_INFINITY,
  'original transaction ID': 30,
  'merchant user ID': 20,
  'country code': 2,
});

/** Adjustment report fields (type 4). */
export const ADJUSTMENT_FIELDS = fieldsInOrder({
  'transaction date': 8,
  'transaction type': 1,
  'adjustment type': 1,
  'transaction ID': 30,
  amount: 10,
  currency: 3,
  'merchant fee': 10,
  'merchant account ID': 8,
  notes: 256,
});

/** The columns of provider_returns a type 1 line fills (the others stay unknown). */
const RETURN_COLUMNS = [
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
] as const satisfies readonly (keyof ReturnRecord)[];

/** A return record's columns that a type 1 line does not carry. */
type NotInLegacyReturn = Exclude<keyof ReturnRecord, 'kind' | (typeof RETURN_COLUMNS)[number]>;

/**
 * The columns of a return record that a type 1 line does not carry, each unknown (null): what a
 * writer of type 1 lines (the sandbox) knows of a return beyond its fields.
 */
export const NOT_IN_LEGACY_RETURN = Object.freeze(
  Object.fromEntries(
    Object.keys(returnColumns)
      .filter((column) => !(RETURN_COLUMNS as readonly string[]).includes(column))
      .map((column) => [column, null]),
  ),
) as Readonly<Record<NotInLegacyReturn, null>>;

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
