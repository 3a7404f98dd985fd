import { bigint, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const returnMatchesColumns = {
  return_transaction_id: text.required,
  original_transaction_id: text.nullable,
  ledger_merchant_transaction_id: text.nullable,
  rule: text.required,
  run_id: bigint.nullable,
  matched_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type ReturnMatchesTable = TableOf<typeof returnMatchesColumns>;
