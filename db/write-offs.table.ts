import { bigint, char, date, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const writeOffsColumns = {
  write_off_id: bigint.defaulted,
  account: text.required,
  currency: char.required,
  amount_cents: bigint.required,
  reason: text.required,
  kind: text.nullable,
  business_date: date.nullable,
  discrepancy_id: bigint.nullable,
  manual_match_id: bigint.nullable,
  run_id: bigint.nullable,
  tolerance_version: bigint.nullable,
  reversal_of: bigint.nullable,
  written_off_by: text.required,
  written_off_at: timestamptz.defaulted,
} as const;

export type WriteOffsTable = TableOf<typeof writeOffsColumns>;
