import { bigint, char, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const manualMatchesColumns = {
  match_id: bigint.defaulted,
  account: text.defaulted,
  currency: char.required,
  provider_amount_cents: bigint.required,
  ledger_amount_cents: bigint.required,
  difference_cents: bigint.required,
  written_off_cents: bigint.defaulted,
  note: text.required,
  matched_by: text.required,
  matched_at: timestamptz.defaulted,
  origin: text.required,
  undone_by: text.nullable,
  undone_at: timestamptz.nullable,
  undo_note: text.nullable,
} as const;

export type ManualMatchesTable = TableOf<typeof manualMatchesColumns>;
