import { bigint, text, timestamptz, type TableOf } from './columns.ts';

export const notificationQuarantineColumns = {
  quarantine_id: bigint.defaulted,
  kind: text.required,
  reason: text.required,
  body: text.required,
  content_type: text.nullable,
  remote_address: text.nullable,
  received_at: timestamptz.defaulted,
} as const;

export type NotificationQuarantineTable = TableOf<typeof notificationQuarantineColumns>;
