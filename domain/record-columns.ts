/**
 * The fields of each normalised record (records.ts), as the warehouse columns that hold them: what the
 * parsers yield and the loader writes. The record tables of db/ are these columns plus how the row was
 * loaded (db/loaded-columns.ts), so a record's field and its column are written once.
 */

import { bigint, char, date, text, timestamptz } from './columns.ts';

/** The text a report record was read from (a line, a CSV row, a JSON object), as the file had it. */
export const rawColumn = { raw: text.required } as const;

/** A transaction of the JSON/CSV report (provider_transactions). */
export const transactionColumns = {
  transaction_id: text.required,
  merchant_id: text.nullable,
  merchant_transaction_id: text.nullable,
  merchant_user_id: text.nullable,
  product_user_id: text.nullable,
  product: text.nullable,
  transaction_type: text.nullable,
  raw_transaction_type: text.required,
  status: text.nullable,
  raw_status: text.required,
  amount_cents: bigint.required,
  fee_cents: bigint.nullable,
  currency: char.required,
  transaction_at: timestamptz.nullable,
  transaction_on: date.required,
  local_time_flag: text.nullable,
  error_code: text.nullable,
  error_message: text.nullable,
  notify_status: text.nullable,
  region: text.nullable,
  country_code: text.nullable,
  payment_method: text.nullable,
  external_reference: text.nullable,
  device_type: text.nullable,
  request_type: text.nullable,
} as const;

/** A transaction of the legacy query (legacy_transactions); query_type says which query read it. */
export const legacyTransactionColumns = {
  transaction_id: text.required,
  transaction_on: date.required,
  raw_transaction_type: text.required,
  merchant_transaction_id: text.nullable,
  amount_cents: bigint.nullable,
  currency: char.nullable,
  status: text.nullable,
  raw_status: text.nullable,
  internal_user_id: text.nullable,
  fee_cents: bigint.nullable,
  merchant_account_id: text.nullable,
  error_code: text.nullable,
  raw_notify_status: text.nullable,
  merchant_user_id: text.nullable,
  raw_transaction_time: text.nullable,
  transaction_at: timestamptz.nullable,
  local_time_flag: text.nullable,
  country_code: text.nullable,
  consumer_email: text.nullable,
  bank_account_masked: text.nullable,
  return_code: text.nullable,
  returned_on: date.nullable,
  completed_on: date.nullable,
  payment_type: text.nullable,
  network_reference: text.nullable,
  query_type: text.required,
} as const;

/** A return (provider_returns). */
export const returnColumns = {
  return_transaction_id: text.required,
  original_transaction_id: text.nullable,
  merchant_transaction_id: text.nullable,
  merchant_id: text.nullable,
  merchant_user_id: text.nullable,
  product_user_id: text.nullable,
  product: text.nullable,
  return_code: text.nullable,
  amount_cents: bigint.required,
  currency: char.required,
  returned_on: date.nullable,
  next_action_date: date.nullable,
  raw_next_action_date: text.nullable,
  settlement_code: text.nullable,
  raw_transaction_type: text.nullable,
  original_transaction_type: text.nullable,
  original_transaction_at: timestamptz.nullable,
  original_external_reference: text.nullable,
  external_reference: text.nullable,
  notify_status: text.nullable,
  region: text.nullable,
  country_code: text.nullable,
  legacy_field_8: text.nullable,
  legacy_field_9: text.nullable,
  /** The three dates a return's sources give, kept apart (migration 0029): JSON reportDate, CSV Settlement Date, legacy field 1. */
  report_date: date.nullable,
  settlement_date: date.nullable,
  last_updated_on: date.nullable,
} as const;

/** An adjustment (provider_adjustments; the table adds its generated adjustment_id). */
export const adjustmentColumns = {
  adjustment_key: text.required,
  transaction_id: text.nullable,
  raw_transaction_type: text.nullable,
  adjustment_type: text.nullable,
  amount_cents: bigint.required,
  fee_cents: bigint.nullable,
  currency: char.required,
  adjusted_on: date.required,
  merchant_account_id: text.nullable,
  notes: text.nullable,
} as const;

/** A merchant ledger entry (merchant_ledger). */
export const ledgerColumns = {
  merchant_transaction_id: text.required,
  transaction_type: text.required,
  amount_cents: bigint.required,
  currency: char.required,
  status: text.required,
  booked_at: timestamptz.required,
  transaction_id: text.nullable,
  original_merchant_transaction_id: text.nullable,
  merchant_user_id: text.nullable,
  product: text.nullable,
  fee_cents: bigint.nullable,
  description: text.nullable,
} as const;
