import { date, text, type TableOf } from '../domain/columns.ts';

/** Each account and day that has provider transactions (migration 0042): the overview's span of days. */
export const providerTransactionDaysColumns = {
  account: text.required,
  transaction_on: date.required,
} as const;

export type ProviderTransactionDaysTable = TableOf<typeof providerTransactionDaysColumns>;
