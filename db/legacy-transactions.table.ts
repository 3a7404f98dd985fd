import type { TableOf } from '../domain/columns.ts';
import { legacyTransactionColumns } from '../domain/record-columns.ts';
import { loadedColumns } from './loaded-columns.ts';

export const legacyTransactionsColumns = { ...legacyTransactionColumns, ...loadedColumns } as const;

export type LegacyTransactionsTable = TableOf<typeof legacyTransactionsColumns>;
