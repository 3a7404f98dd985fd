import { bigint, date, integer, jsonb, text, type TableOf } from '../domain/columns.ts';

export const matchCandidatesColumns = {
  discrepancy_id: bigint.required,
  account: text.defaulted,
  business_date: date.required,
  rank: integer.required,
  side: text.required,
  candidate_id: text.required,
  candidate_discrepancy_id: bigint.nullable,
  amount_cents: bigint.required,
  candidate_business_date: date.required,
  merchant_transaction_id: text.nullable,
  score: integer.required,
  checks: jsonb.required,
  run_id: bigint.required,
} as const;

export type MatchCandidatesTable = TableOf<typeof matchCandidatesColumns>;
