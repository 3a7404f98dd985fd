/** What a legacy transaction row says of a provider transaction (ingest/load/merge-staging.ts, new-rows.ts). */

/**
 * How a legacy type 5/6 row reads as a provider_transactions row. Legacy type codes (field 2) and
 * notification codes (field 12) have no published meaning, so transaction_type stays null with the
 * raw code kept, and notify_status carries field 12 raw. Columns not listed are not carried by legacy
 * rows: unknown (null in a new provider row, kept in an existing one).
 */
export const LEGACY_AS_PROVIDER: Readonly<Record<string, string>> = {
  transaction_id: 'transaction_id',
  merchant_id: 'merchant_account_id',
  merchant_transaction_id: 'merchant_transaction_id',
  merchant_user_id: 'merchant_user_id',
  product_user_id: 'internal_user_id',
  raw_transaction_type: 'raw_transaction_type',
  status: 'status',
  raw_status: 'raw_status',
  amount_cents: 'amount_cents',
  fee_cents: 'fee_cents',
  currency: 'currency',
  transaction_at: 'transaction_at',
  transaction_on: 'transaction_on',
  local_time_flag: 'local_time_flag',
  error_code: 'error_code',
  notify_status: 'raw_notify_status',
  country_code: 'country_code',
  raw: 'raw',
};

/** The legacy fields a provider row cannot stand without (amount, currency, status). */
export const LEGACY_PROJECTION_REQUIRES: readonly string[] = ['amount_cents', 'currency', 'raw_status'];
