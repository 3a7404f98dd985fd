import { bigint, char, date, text, timestamptz, type TableOf } from './columns.ts';

export const providerAdjustmentsColumns = {
  adjustment_id: bigint.defaulted,
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
  source: text.required,
  load_id: bigint.required,
  first_load_id: bigint.required,
  raw: text.required,
  created_at: timestamptz.defaulted,
  updated_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type ProviderAdjustmentsTable = TableOf<typeof providerAdjustmentsColumns>;
