import { bigint, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const sourceMatchesColumns = {
  transaction_id: text.required,
  legacy_transaction_id: text.required,
  run_id: bigint.nullable,
  matched_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type SourceMatchesTable = TableOf<typeof sourceMatchesColumns>;
