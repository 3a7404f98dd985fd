import { bigint, bytea, char, integer, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const notificationQuarantineColumns = {
  quarantine_id: bigint.defaulted,
  kind: text.required,
  reason: text.required,
  body: text.nullable,
  content_type: text.nullable,
  remote_address: text.nullable,
  received_at: timestamptz.defaulted,
  raw_body: bytea.required,
  body_sha256: char.nullable,
  delivery_count: integer.defaulted,
  last_received_at: timestamptz.defaulted,
  account: text.nullableDefaulted,
  transaction_id: text.nullable,
  replayed_at: timestamptz.nullable,
  notification_id: bigint.nullable,
} as const;

export type NotificationQuarantineTable = TableOf<typeof notificationQuarantineColumns>;
