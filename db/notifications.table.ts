import { bigint, char, integer, jsonb, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const notificationsColumns = {
  notification_id: bigint.defaulted,
  kind: text.required,
  delivery_key: char.required,
  transaction_id: text.nullable,
  merchant_transaction_id: text.nullable,
  merchant_id: text.nullable,
  merchant_user_id: text.nullable,
  transaction_type: text.nullable,
  raw_transaction_type: text.nullable,
  status: text.nullable,
  raw_status: text.nullable,
  amount_cents: bigint.nullable,
  raw_amount: text.nullable,
  fee_cents: bigint.nullable,
  currency: char.nullable,
  error_code: text.nullable,
  return_code: text.nullable,
  raw_next_action_date: text.nullable,
  account_token: text.nullable,
  account_label: text.nullable,
  payload: jsonb.required,
  received_at: timestamptz.defaulted,
  last_received_at: timestamptz.defaulted,
  delivery_count: integer.defaulted,
  confirmed_at: timestamptz.nullable,
  verification_code: text.nullable,
  account: text.defaulted,
} as const;

export type NotificationsTable = TableOf<typeof notificationsColumns>;
