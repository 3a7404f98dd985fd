import { bigint, char, integer, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const alertDeliveriesColumns = {
  alert_key: text.required,
  webhook_sha256: char.required,
  kind: text.required,
  reconcile_run_id: bigint.nullable,
  status_code: integer.required,
  attempts: integer.required,
  delivered_at: timestamptz.defaulted,
} as const;

export type AlertDeliveriesTable = TableOf<typeof alertDeliveriesColumns>;
