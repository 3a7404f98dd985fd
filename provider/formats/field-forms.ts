/**
 * The forms the provider gives its record fields (docs/provider-interface.md 4.5): sizes, closed sets
 * of values, fixed shapes. A value outside its form is not stored: its row is rejected with a reason
 * naming the field. This is also how a row cut short inside its last field is caught (a region `O`,
 * a country `C`). Where the provider shows no form, the value is kept raw and nothing is checked.
 * Pure: each check returns the problem, or null.
 */

import type { ReturnRecord, TransactionRecord } from '../../domain/records.ts';

/** Provinces and territories of ISO 3166-2:CA, the form of a report's transactionRegion (docs/provider-interface.md 4.1). */
export const CA_REGIONS: ReadonlySet<string> = new Set([
  'AB',
  'BC',
  'MB',
  'NB',
  'NL',
  'NS',
  'NT',
  'NU',
  'ON',
  'PE',
  'QC',
  'SK',
  'YT',
]);

/** transactionNotifyStatus: C completed, S sent, I not sent (docs/provider-interface.md 4.1, 3). */
export const NOTIFY_STATUSES: ReadonlySet<string> = new Set(['C', 'S', 'I']);
export const REPORT_TRANSACTION_TYPES: ReadonlySet<string> = new Set(['DEBIT', 'CREDIT']);
export const REPORT_STATUSES: ReadonlySet<string> = new Set(['SUCCESSFUL', 'PENDING', 'REJECTED']);

/**
 * Lengths (inclusive) the provider states for the merchant's fields, in its Merchant object (2.1, 8).
 * The report API gives the service's transaction ids no size (the legacy CSV has its own field
 * sizes, checked there): they are not checked.
 */
export const LENGTHS = {
  merchantTransactionId: [1, 30],
  merchantId: [1, 16],
  merchantUserId: [3, 64],
} as const satisfies Record<string, readonly [number, number]>;

const COUNTRY = /^[A-Z]{2}$/;

/** What is wrong with a value's length, or null (a null value has no length to check). */
export function lengthProblem(
  field: string,
  value: string | null,
  [min, max]: readonly [number, number],
): string | null {
  if (value === null || (value.length >= min && value.length <= max)) return null;
  return `${field} is ${value.length} character${value.length === 1 ? '' : 's'} long; the provider's limit is ${min}-${max}`;
}

/** An uppercase ISO 3166-1 alpha-2 country code (docs/provider-interface.md 4.1 countryCode, 4.4 legacy fields 15 and 12). */
export function countryProblem(field: string, value: string | null): string | null {
  if (value === null || COUNTRY.test(value)) return null;
  return `${field} '${shown(value)}' is not a two-letter ISO 3166 country code`;
}

/** A value of a closed set, or null. */
export function oneOfProblem(
  field: string,
  value: string | null,
  allowed: ReadonlySet<string>,
): string | null {
  if (value === null || allowed.has(value)) return null;
  return `${field} '${shown(value)}' is not one of the provider's values (${[...allowed].join(', ')})`;
}

/** The names a format gives the columns checked here, for the reasons it states. */
export type FieldNames = Readonly<
  Record<
    | 'merchant_transaction_id'
    | 'merchant_id'
    | 'merchant_user_id'
    | 'country_code'
    | 'region'
    | 'notify_status'
    | 'raw_transaction_type'
    | 'raw_status',
    string
  >
>;

/**
 * The first form a report record (JSON or CSV report) breaks, or null. Transactions: the merchant's
 * fields within their lengths, type DEBIT or CREDIT, status SUCCESSFUL, PENDING or REJECTED, notify
 * status C, S or I, a two-letter country and an ISO 3166-2:CA region. Returns: the same for the fields
 * they carry; their type and original type are shown only by example, so they are not checked.
 */
export function reportRecordProblem(r: TransactionRecord | ReturnRecord, names: FieldNames): string | null {
  const enums =
    r.kind === 'transaction'
      ? [
          oneOfProblem(names.raw_transaction_type, r.raw_transaction_type, REPORT_TRANSACTION_TYPES),
          oneOfProblem(names.raw_status, r.raw_status, REPORT_STATUSES),
        ]
      : [];
  const problems = [
    lengthProblem(names.merchant_transaction_id, r.merchant_transaction_id, LENGTHS.merchantTransactionId),
    lengthProblem(names.merchant_id, r.merchant_id, LENGTHS.merchantId),
    lengthProblem(names.merchant_user_id, r.merchant_user_id, LENGTHS.merchantUserId),
    ...enums,
    oneOfProblem(names.notify_status, r.notify_status, NOTIFY_STATUSES),
    countryProblem(names.country_code, r.country_code),
    oneOfProblem(names.region, r.region, CA_REGIONS),
  ];
  return problems.find((p) => p !== null) ?? null;
}

function shown(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}
