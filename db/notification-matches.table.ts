import { bigint, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const notificationMatchesColumns = {
  notification_id: bigint.required,
  kind: text.required,
  target_id: text.required,
  first_received_at: timestamptz.required,
  rule: text.required,
  run_id: bigint.nullable,
  matched_at: timestamptz.defaulted,
  account: text.defaulted,
} as const;

export type NotificationMatchesTable = TableOf<typeof notificationMatchesColumns>;
