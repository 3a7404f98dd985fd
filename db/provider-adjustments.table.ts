import { bigint, type TableOf } from '../domain/columns.ts';
import { adjustmentColumns } from '../domain/record-columns.ts';
import { adjustmentLoadedColumns } from './loaded-columns.ts';

export const providerAdjustmentsColumns = {
  adjustment_id: bigint.defaulted,
  ...adjustmentColumns,
  ...adjustmentLoadedColumns,
} as const;

export type ProviderAdjustmentsTable = TableOf<typeof providerAdjustmentsColumns>;
