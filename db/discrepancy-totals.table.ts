import { bigint, char, date, text, type TableOf } from '../domain/columns.ts';

export const discrepancyTotalsColumns = {
  business_date: date.required,
  kind: text.required,
  currency: char.required,
  status: text.required,
  count: bigint.required,
  cents: bigint.required,
  account: text.defaulted,
} as const;

export type DiscrepancyTotalsTable = TableOf<typeof discrepancyTotalsColumns>;
