import { char, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const workbenchSessionsColumns = {
  session_sha256: char.required,
  username: text.required,
  created_at: timestamptz.defaulted,
  expires_at: timestamptz.required,
  last_seen_at: timestamptz.defaulted,
} as const;

export type WorkbenchSessionsTable = TableOf<typeof workbenchSessionsColumns>;
