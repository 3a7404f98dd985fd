import { bigint, char, date, integer, text, type TableOf } from '../domain/columns.ts';

export const feeScheduleColumns = {
  product: text.required,
  transaction_type: text.required,
  currency: char.required,
  fixed_cents: bigint.defaulted,
  basis_points: integer.defaulted,
  valid_from: date.required,
  valid_to: date.nullable,
  rounding: text.defaulted,
} as const;

export type FeeScheduleTable = TableOf<typeof feeScheduleColumns>;
