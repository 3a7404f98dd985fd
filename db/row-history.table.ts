import { bigint, boolean, jsonb, text, textArray, timestamptz, type TableOf } from '../domain/columns.ts';

export const rowHistoryColumns = {
  history_id: bigint.defaulted,
  table_name: text.required,
  row_key: text.required,
  previous: jsonb.required,
  changed_columns: textArray.required,
  load_id: bigint.required,
  changed_at: timestamptz.defaulted,
  account: text.defaulted,
  refused: boolean.defaulted,
} as const;

export type RowHistoryTable = TableOf<typeof rowHistoryColumns>;
