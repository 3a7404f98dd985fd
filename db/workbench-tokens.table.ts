import { bigint, char, text, textArray, timestamptz, type TableOf } from '../domain/columns.ts';

export const workbenchTokensColumns = {
  token_id: bigint.defaulted,
  name: text.required,
  role: text.required,
  token_sha256: char.required,
  created_at: timestamptz.defaulted,
  revoked_at: timestamptz.nullable,
  last_used_at: timestamptz.nullable,
  expires_at: timestamptz.required,
  accounts: textArray.nullable,
} as const;

export type WorkbenchTokensTable = TableOf<typeof workbenchTokensColumns>;
