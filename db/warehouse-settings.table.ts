import { boolean, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const warehouseSettingsColumns = {
  singleton: boolean.defaulted,
  environment: text.required,
  created_at: timestamptz.defaulted,
} as const;

export type WarehouseSettingsTable = TableOf<typeof warehouseSettingsColumns>;
