import { text, bigint, date, jsonb, timestamptz, type TableOf } from '../domain/columns.ts';

export const reconcileRunsColumns = {
  run_id: bigint.defaulted,
  range_from: date.required,
  range_to: date.required,
  as_of: timestamptz.required,
  settings: jsonb.required,
  summary: jsonb.nullable,
  started_at: timestamptz.defaulted,
  finished_at: timestamptz.nullable,
  account: text.defaulted,
} as const;

export type ReconcileRunsTable = TableOf<typeof reconcileRunsColumns>;
