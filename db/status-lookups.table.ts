import { bigint, date, jsonb, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const statusLookupsColumns = {
  lookup_id: bigint.defaulted,
  transaction_id: text.required,
  status: text.nullable,
  raw_status: text.nullable,
  fee_cents: bigint.nullable,
  error_code: text.nullable,
  return_code: text.nullable,
  next_action_date: date.nullable,
  response: jsonb.nullable,
  error: text.nullable,
  looked_up_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type StatusLookupsTable = TableOf<typeof statusLookupsColumns>;
