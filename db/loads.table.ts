import { bigint, boolean, char, integer, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const loadsColumns = {
  load_id: bigint.defaulted,
  source: text.required,
  environment: text.required,
  origin: text.required,
  format: text.required,
  query_type: text.nullable,
  response_fields: text.nullable,
  file_name: text.nullable,
  file_sha256: char.nullable,
  file_bytes: bigint.nullable,
  zipped: boolean.defaulted,
  window_start: timestamptz.nullable,
  window_end: timestamptz.nullable,
  status: text.defaulted,
  rows_read: bigint.defaulted,
  rows_loaded: bigint.defaulted,
  rows_rejected: bigint.defaulted,
  rows_inserted: bigint.defaulted,
  rows_updated: bigint.defaulted,
  rows_unchanged: bigint.defaulted,
  error: text.nullable,
  workflow_id: text.nullable,
  started_at: timestamptz.defaulted,
  finished_at: timestamptz.nullable,
  owner_pid: integer.nullable,
  owner_backend_start: timestamptz.nullable,
  account: text.defaulted,
} as const;

export type LoadsTable = TableOf<typeof loadsColumns>;
