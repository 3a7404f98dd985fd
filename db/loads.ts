/** Reads of the `loads` table in the loader's own terms. */

import type { LoadSummary } from '../domain/load-summary.ts';
import type { LoadSource } from '../domain/records.ts';
import type { Db } from './database.ts';

/**
 * The summary of a committed load, as the loader returned it (its duration is not stored: 0), or
 * undefined when the load does not exist or did not commit.
 */
export async function readCommittedLoad(db: Db, loadId: number): Promise<LoadSummary | undefined> {
  const load = await db
    .selectFrom('loads')
    .select([
      'load_id',
      'source',
      'rows_read',
      'rows_loaded',
      'rows_rejected',
      'rows_inserted',
      'rows_updated',
      'rows_unchanged',
      'file_sha256',
      'file_bytes',
      'zipped',
    ])
    .where('load_id', '=', loadId)
    .where('status', '=', 'committed')
    .executeTakeFirst();
  return (
    load && {
      loadId: load.load_id,
      source: load.source as LoadSource,
      status: 'committed',
      rowsRead: load.rows_read,
      rowsLoaded: load.rows_loaded,
      rowsRejected: load.rows_rejected,
      rowsInserted: load.rows_inserted,
      rowsUpdated: load.rows_updated,
      rowsUnchanged: load.rows_unchanged,
      fileSha256: load.file_sha256,
      bytes: Number(load.file_bytes ?? 0),
      zipped: load.zipped,
      durationMs: 0,
    }
  );
}
