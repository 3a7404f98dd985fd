import { bigint, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const transactionMatchesColumns = {
  transaction_id: text.required,
  merchant_transaction_id: text.required,
  rule: text.required,
  run_id: bigint.nullable,
  matched_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type TransactionMatchesTable = TableOf<typeof transactionMatchesColumns>;
