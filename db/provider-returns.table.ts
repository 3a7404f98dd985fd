import type { TableOf } from '../domain/columns.ts';
import { returnColumns } from '../domain/record-columns.ts';
import { pulledColumns } from './loaded-columns.ts';

export const providerReturnsColumns = { ...returnColumns, ...pulledColumns } as const;

export type ProviderReturnsTable = TableOf<typeof providerReturnsColumns>;
