import { bigint, text, timestamptz, type TableOf } from '../domain/columns.ts';
import { ledgerColumns } from '../domain/record-columns.ts';

export const merchantLedgerColumns = {
  ...ledgerColumns,
  load_id: bigint.nullable,
  created_at: timestamptz.defaulted,
  updated_at: timestamptz.defaulted,
  unknown_mask: bigint.nullable,
  account: text.defaulted,
} as const;

export type MerchantLedgerTable = TableOf<typeof merchantLedgerColumns>;
