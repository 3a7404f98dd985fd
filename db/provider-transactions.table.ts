import type { TableOf } from '../domain/columns.ts';
import { transactionColumns } from '../domain/record-columns.ts';
import { pulledColumns } from './loaded-columns.ts';

export const providerTransactionsColumns = { ...transactionColumns, ...pulledColumns } as const;

export type ProviderTransactionsTable = TableOf<typeof providerTransactionsColumns>;
