import { integer, text, timestamptz, type TableOf } from './columns.ts';

export const workbenchSignInFailuresColumns = {
  username: text.required,
  failures: integer.required,
  first_failed_at: timestamptz.required,
  locked_until: timestamptz.nullable,
} as const;

export type WorkbenchSignInFailuresTable = TableOf<typeof workbenchSignInFailuresColumns>;
