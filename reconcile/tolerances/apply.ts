import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { SettingsProposal } from './settings-file.ts';
import { InvalidTolerance, setTolerances } from './tolerance.ts';

/**
 * `recon tolerances apply FILE`: sets the tolerances of a proposal that was previewed
 * (reconcile_settings holds a preview of the same content, not yet applied), each account's as its
 * next version, and records who applied it and when, in one transaction. The next reconcile run of
 * each account matches with them (a full matching: another tolerances version is another
 * fingerprint). Returns the new version per account.
 */
export async function applySettings(
  db: Kysely<Database>,
  proposal: SettingsProposal,
  by: string,
): Promise<{ settingsId: number; versions: Record<string, number> }> {
  return db.transaction().execute(async (trx) => {
    const found = await sql<{ settings_id: number; applied_at: string | null }>`
      select settings_id::int as settings_id, applied_at::text as applied_at from reconcile_settings
      where content_sha256 = ${proposal.sha256} order by applied_at is null desc, settings_id desc limit 1
      for update`.execute(trx);
    const row = found.rows[0];
    if (!row)
      throw new InvalidTolerance(
        'these settings were never previewed: run recon rules preview --settings FILE first, read what would change, then apply',
      );
    if (row.applied_at !== null)
      throw new InvalidTolerance(
        `these settings were applied already (settings ${row.settings_id}, at ${row.applied_at}); preview them again to apply them again`,
      );
    const versions: Record<string, number> = {};
    for (const account of [...new Set(proposal.tolerances.map((t) => t.account))].sort()) {
      versions[account] = await setTolerances(trx, {
        account,
        changes: proposal.tolerances.filter((t) => t.account === account),
        setBy: by,
        note: proposal.note,
        settingsId: row.settings_id,
      });
    }
    await trx
      .updateTable('reconcile_settings')
      .set({ applied_by: by, applied_at: sql<string>`now()` })
      .where('settings_id', '=', row.settings_id)
      .execute();
    return { settingsId: row.settings_id, versions };
  });
}
