import { bigint, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const rejectedRowsColumns = {
  rejected_row_id: bigint.defaulted,
  load_id: bigint.required,
  line_number: bigint.required,
  raw: text.required,
  reason: text.required,
  created_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type RejectedRowsTable = TableOf<typeof rejectedRowsColumns>;
