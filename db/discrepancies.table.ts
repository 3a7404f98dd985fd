import { bigint, char, date, jsonb, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const discrepanciesColumns = {
  discrepancy_id: bigint.defaulted,
  discrepancy_key: text.required,
  kind: text.required,
  rule: text.required,
  transaction_id: text.nullable,
  merchant_transaction_id: text.nullable,
  return_transaction_id: text.nullable,
  business_date: date.nullable,
  currency: char.nullable,
  expected: jsonb.nullable,
  actual: jsonb.nullable,
  expected_amount_cents: bigint.nullable,
  actual_amount_cents: bigint.nullable,
  difference_cents: bigint.nullable,
  candidates: jsonb.nullable,
  status: text.defaulted,
  first_seen_at: timestamptz.defaulted,
  last_seen_at: timestamptz.defaulted,
  resolved_at: timestamptz.nullable,
  acknowledged_at: timestamptz.nullable,
  acknowledged_by: text.nullable,
  note: text.nullable,
  assignee: text.nullable,
  resolution: text.nullable,
  resolved_by: text.nullable,
  /** Generated: read only. */
  stake_cents: bigint.nullable,
  account: text.defaulted,
} as const;

export type DiscrepanciesTable = TableOf<typeof discrepanciesColumns>;
