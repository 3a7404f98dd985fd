import { bigint, date, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const manualMatchItemsColumns = {
  match_id: bigint.required,
  account: text.defaulted,
  side: text.required,
  item_id: text.required,
  amount_cents: bigint.required,
  business_date: date.required,
  undone_at: timestamptz.nullable,
} as const;

export type ManualMatchItemsTable = TableOf<typeof manualMatchItemsColumns>;
