import type {
  AdjustmentRecord,
  LegacyTransactionRecord,
  ReportRecord,
  ReturnRecord,
} from '../../../domain/records.ts';
import { InvalidParseOption } from '../invalid-parse-option.ts';

/** The legacy CSV layouts (docs/provider-interface.md 4.4): fields, their sizes, the warehouse columns they fill, the field selection. */

export interface FieldSpec {
  readonly size: number;
  readonly label: string;
}

/** Transaction report fields 1-22 of docs/provider-interface.md 4.4 (types 5 and 6). */
export const TRANSACTION_FIELDS: Record<number, FieldSpec> = {
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
  for (const n of selection as readonly number[]) columns.push(...(TRANSACTION_FIELD_COLUMNS[n] ?? []));
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
