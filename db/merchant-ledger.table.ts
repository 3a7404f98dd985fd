import { bigint, char, text, timestamptz, type TableOf } from './columns.ts';

export const merchantLedgerColumns = {
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
  load_id: bigint.nullable,
  created_at: timestamptz.defaulted,
  updated_at: timestamptz.defaulted,
  unknown_mask: bigint.nullable,
  account: text.defaulted,
} as const;

export type MerchantLedgerTable = TableOf<typeof merchantLedgerColumns>;
