import { bigint, char, integer, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const matchingTolerancesColumns = {
  account: text.required,
  currency: char.required,
  version: bigint.required,
  amount_tolerance_cents: bigint.defaulted,
  date_lag_business_days: integer.defaulted,
  write_off_limit_cents: bigint.defaulted,
  set_by: text.required,
  set_at: timestamptz.defaulted,
  note: text.nullable,
  settings_id: bigint.nullable,
} as const;

export type MatchingTolerancesTable = TableOf<typeof matchingTolerancesColumns>;
