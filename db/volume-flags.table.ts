import { bigint, date, integer, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const volumeFlagsColumns = {
  account: text.required,
  source: text.required,
  business_date: date.required,
  rows_loaded: bigint.required,
  usual_rows: bigint.required,
  baseline_days: integer.required,
  low_percent: integer.required,
  first_flagged_at: timestamptz.defaulted,
  checked_at: timestamptz.defaulted,
  cleared_at: timestamptz.nullable,
  alerted_at: timestamptz.nullable,
} as const;

export type VolumeFlagsTable = TableOf<typeof volumeFlagsColumns>;
