import { createHash } from 'node:crypto';
import type { AdjustmentRecord, LegacyTransactionRecord, ReturnRecord } from '../../../domain/records.ts';
import { easternToUtc } from '../../../domain/time/eastern.ts';
import {
  cents,
  checkCount,
  checkSize,
  country,
  currency,
  date,
  FieldProblem,
  type FieldSpec,
  nonEmpty,
  optionalCents,
  orNull,
  split,
} from './fields.ts';
import {
  ADJUSTMENT_FIELDS,
  DEFAULT_FIELDS,
  RETURN_FIELDS,
  TRANSACTION_FIELDS,
  type TransactionField,
} from './layout.ts';

/** One legacy line as a record, per query type: transactions (5, 6), returns (1), adjustments (4). */

/**
 * The builder of a transaction record (types 5 and 6) for a field selection: each selected field of
 * the layout table (layout.ts) checks its value and sets its columns; the columns of fields not
 * selected stay unknown (null).
 */
export function transactionRecord(
  queryType: '5' | '6',
  selection: readonly number[],
): (raw: string) => LegacyTransactionRecord {
  const fields = selection.map((n) => TRANSACTION_FIELDS[n] as TransactionField);
  const what =
    selection === DEFAULT_FIELDS[queryType]
      ? `query type ${queryType}, fields ${selection[0]}-${selection[selection.length - 1]}`
      : `query type ${queryType}, fields ${selection.join(',')}`;
  return (raw) => {
    const values = split(raw);
    checkCount(values, selection.length, what);
    const r = unknownTransaction(queryType, raw);
    for (let i = 0; i < fields.length; i++) {
      const n = selection[i] as number;
      const field = fields[i] as TransactionField;
      const v = values[i] as string;
      checkSize(n, field, v);
      field.read(r, v, n, field);
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

/** A transaction record of the line `raw` whose every field is still to be read: unknown (null). */
function unknownTransaction(queryType: '5' | '6', raw: string): LegacyTransactionRecord {
  // Fields 1, 2 and 4 are in every selection (layout.ts legacySelection): their '' is always replaced.
  return {
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
}

export function returnRecord(raw: string): ReturnRecord {
  const v = split(raw);
  checkCount(v, RETURN_FIELDS.length, 'query type 1 returns, fields 1-12');
  for (let i = 0; i < v.length; i++) checkSize(i + 1, RETURN_FIELDS[i] as FieldSpec, v[i] as string);
  const f = (n: number) => v[n - 1] as string;
  const s = (n: number) => RETURN_FIELDS[n - 1] as FieldSpec;
  const lastUpdated = date(1, s(1), f(1));
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
    // Field 1 is the date the return was last updated: it moves when the return changes.
    returned_on: lastUpdated,
    report_date: null,
    settlement_date: null,
    last_updated_on: lastUpdated,
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
    country_code: country(12, s(12), f(12)),
    // Fields 8 and 9: meaning not shown by the provider, kept raw (column comments).
    legacy_field_8: orNull(f(8)),
    legacy_field_9: orNull(f(9)),
    raw,
  };
}

export function adjustmentRecord(raw: string): AdjustmentRecord {
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
    fee_cents: optionalCents(7, s(7), f(7), true),
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
