import type { AdjustmentRecord, LegacyTransactionRecord, ReturnRecord } from '../../domain/records.ts';
import { csvLine } from './csv-field.ts';

/**
 * The legacy query interface's CSV (docs/provider-interface.md 4.4): no header, line feeds, dates YYYYMMDD and times
 * HHMMSS in Eastern time, amounts with the decimal point implied (cents written as digits: 2015 is
 * 20.15). A record's Eastern date and time come from its own fields (transaction_on and
 * raw_transaction_time), which the sandbox history computes from the instant; for a wall time in the
 * repeated November hour a reader takes the earlier (daylight) offset, so the history keeps legacy
 * transactions on that side (see sandbox/history.ts).
 */

/** Default response fields of query types 5 and 6 (docs/provider-interface.md 2.3). */
export const LEGACY_DEFAULT_FIELDS = {
  '5': Array.from({ length: 17 }, (_, k) => k + 1),
  '6': Array.from({ length: 19 }, (_, k) => k + 1),
} as const;

const compact = (date: string | null) => (date === null ? null : date.replaceAll('-', ''));

/** The column each legacy transaction field 1..22 is written from, in field order (docs/provider-interface.md 4.4). */
const FIELD_COLUMNS = [
  'transaction_on',
  'raw_transaction_type',
  'merchant_transaction_id',
  'transaction_id',
  'amount_cents',
  'currency',
  'raw_status',
  'internal_user_id',
  'fee_cents',
  'merchant_account_id',
  'error_code',
  'raw_notify_status',
  'merchant_user_id',
  'raw_transaction_time',
  'country_code',
  'consumer_email',
  'bank_account_masked',
  'return_code',
  'returned_on',
  'completed_on',
  'payment_type',
  'network_reference',
] as const satisfies readonly (keyof LegacyTransactionRecord)[];

/** The fields that are dates, written YYYYMMDD: transaction, return and completion date. */
const DATE_FIELDS: ReadonlySet<number> = new Set([1, 19, 20]);

/** The value of legacy transaction field `n` (1..22) of a record, as the CSV writes it. */
export function legacyTransactionField(r: LegacyTransactionRecord, n: number): string | number | null {
  const column = FIELD_COLUMNS[n - 1];
  if (column === undefined) throw new RangeError(`legacy transaction field ${n} does not exist (1..22)`);
  const value = r[column];
  return DATE_FIELDS.has(n) ? compact(value as string | null) : value;
}

export function legacyTransactionLine(r: LegacyTransactionRecord, fields: readonly number[]): string {
  return csvLine(fields.map((n) => legacyTransactionField(r, n)));
}

/** Query type 1 (returns), fields 1..12; fields 8 and 9 are not shown by the provider and left empty. */
export function legacyReturnLine(r: ReturnRecord): string {
  return csvLine([
    compact(r.returned_on),
    r.raw_transaction_type ?? '4',
    r.return_code,
    r.merchant_transaction_id,
    r.return_transaction_id,
    r.amount_cents,
    r.currency,
    r.legacy_field_8,
    r.legacy_field_9,
    r.original_transaction_id,
    r.merchant_user_id,
    r.country_code,
  ]);
}

/** Query type 4 (adjustments), fields 1..9. A negative amount is written with a minus sign. */
export function legacyAdjustmentLine(r: AdjustmentRecord): string {
  return csvLine([
    compact(r.adjusted_on),
    r.raw_transaction_type,
    r.adjustment_type,
    r.transaction_id,
    r.amount_cents,
    r.currency,
    r.fee_cents,
    r.merchant_account_id,
    r.notes,
  ]);
}

/**
 * The record as a reader of a CSV with only `fields` sees it: fields not selected are null, and so is
 * the instant (fields 1 and 14 together give it) when field 14 is not selected.
 */
export function projectLegacyTransaction(
  r: LegacyTransactionRecord,
  fields: readonly number[],
): LegacyTransactionRecord {
  const has = new Set(fields);
  const pick = <T>(n: number, v: T): T | null => (has.has(n) ? v : null);
  return {
    ...r,
    raw_transaction_type: r.raw_transaction_type,
    merchant_transaction_id: pick(3, r.merchant_transaction_id),
    amount_cents: pick(5, r.amount_cents),
    currency: pick(6, r.currency),
    status: pick(7, r.status),
    raw_status: pick(7, r.raw_status),
    internal_user_id: pick(8, r.internal_user_id),
    fee_cents: pick(9, r.fee_cents),
    merchant_account_id: pick(10, r.merchant_account_id),
    error_code: pick(11, r.error_code),
    raw_notify_status: pick(12, r.raw_notify_status),
    merchant_user_id: pick(13, r.merchant_user_id),
    raw_transaction_time: pick(14, r.raw_transaction_time),
    transaction_at: pick(14, r.transaction_at),
    local_time_flag: pick(14, r.local_time_flag),
    country_code: pick(15, r.country_code),
    consumer_email: pick(16, r.consumer_email),
    bank_account_masked: pick(17, r.bank_account_masked),
    return_code: pick(18, r.return_code),
    returned_on: pick(19, r.returned_on),
    completed_on: pick(20, r.completed_on),
    payment_type: pick(21, r.payment_type),
    network_reference: pick(22, r.network_reference),
  };
}

/** Lines in chunks of about `chunkBytes`. */
export async function* linesInChunks(
  lines: Iterable<string> | AsyncIterable<string>,
  chunkBytes = 64 * 1024,
): AsyncGenerator<string> {
  let buffer = '';
  for await (const line of lines) {
    buffer += line;
    if (buffer.length >= chunkBytes) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}
