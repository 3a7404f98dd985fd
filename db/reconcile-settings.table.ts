import { bigint, char, jsonb, text, timestamptz, type TableOf } from '../domain/columns.ts';

export const reconcileSettingsColumns = {
  settings_id: bigint.defaulted,
  content_sha256: char.required,
  content: jsonb.required,
  previewed_by: text.required,
  previewed_at: timestamptz.defaulted,
  preview: jsonb.required,
  applied_by: text.nullable,
  applied_at: timestamptz.nullable,
} as const;

export type ReconcileSettingsTable = TableOf<typeof reconcileSettingsColumns>;
