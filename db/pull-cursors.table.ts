import { bigint, char, date, text, timestamptz } from '../domain/columns.ts';
import type { TableOf } from '../domain/columns.ts';

export const pullCursorsColumns = {
  source: text.required,
  window_from: date.required,
  window_to: date.required,
  load_id: bigint.required,
  file_sha256: char.nullable,
  rows_loaded: bigint.required,
  workflow_id: text.required,
  run_id: text.required,
  committed_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type PullCursorsTable = TableOf<typeof pullCursorsColumns>;
