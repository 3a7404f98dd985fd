import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { SettingsProposal } from './settings-file.ts';
import { checkTolerance } from './tolerance.ts';

/**
 * A proposal as its preview recorded it in reconcile_settings (content: the note and the checked
 * tolerances; content_sha256: the hash of the file's canonical form), so that the workbench can apply
 * the proposal a person previewed by its settings id instead of sending the file again. The figures
 * are checked again on the way out: what applies is what a proposal may hold.
 */
export interface StoredProposal {
  readonly settingsId: number;
  readonly proposal: SettingsProposal;
  /** The accounts it names, sorted. */
  readonly accounts: readonly string[];
  readonly previewedBy: string;
  readonly previewedAt: string;
  readonly appliedBy: string | null;
  readonly appliedAt: string | null;
}

interface Content {
  note?: string | null;
  tolerances?: {
    account: string;
    currency: string;
    amountCents: number;
    dateLagBusinessDays: number;
    writeOffLimitCents: number;
  }[];
}

/** The recorded proposal of settings `settingsId`, or undefined when there is none. */
export async function storedProposal(db: Db, settingsId: number): Promise<StoredProposal | undefined> {
  const r = await sql<{
    content: Content;
    content_sha256: string;
    previewed_by: string;
    previewed_at: string;
    applied_by: string | null;
    applied_at: string | null;
  }>`select content, content_sha256, previewed_by,
      to_char(previewed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as previewed_at, applied_by,
      to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as applied_at
    from reconcile_settings where settings_id = ${settingsId}`.execute(db);
  const row = r.rows[0];
  if (!row) return undefined;
  const tolerances = (row.content.tolerances ?? []).map((t) => ({
    account: t.account,
    currency: t.currency,
    ...checkTolerance(t.currency, t),
  }));
  return {
    settingsId,
    proposal: { note: row.content.note ?? null, tolerances, sha256: row.content_sha256 },
    accounts: [...new Set(tolerances.map((t) => t.account))].sort(),
    previewedBy: row.previewed_by,
    previewedAt: row.previewed_at,
    appliedBy: row.applied_by,
    appliedAt: row.applied_at,
  };
}
