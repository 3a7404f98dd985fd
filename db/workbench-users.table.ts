import { text, textArray, timestamptz, type TableOf } from '../domain/columns.ts';

export const workbenchUsersColumns = {
  username: text.required,
  role: text.required,
  password_hash: text.required,
  created_at: timestamptz.defaulted,
  disabled_at: timestamptz.nullable,
  accounts: textArray.nullable,
} as const;

export type WorkbenchUsersTable = TableOf<typeof workbenchUsersColumns>;
