import { bigint, jsonb, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const discrepancyEventsColumns = {
  event_id: bigint.defaulted,
  discrepancy_id: bigint.required,
  event: text.required,
  details: jsonb.nullable,
  at: timestamptz.defaulted,
  actor: text.nullable,
  account: text.defaulted,
} as const;

export type DiscrepancyEventsTable = TableOf<typeof discrepancyEventsColumns>;
