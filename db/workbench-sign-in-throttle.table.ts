import { char, integer, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const workbenchSignInThrottleColumns = {
  scope: text.required,
  key_sha256: char.required,
  attempts: integer.required,
  last_attempt_at: timestamptz.required,
  next_allowed_at: timestamptz.required,
} as const;

export type WorkbenchSignInThrottleTable = TableOf<typeof workbenchSignInThrottleColumns>;
