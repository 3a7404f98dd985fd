import type { Kysely } from 'kysely';
import type { PullRequest } from '../../activities/dependencies.ts';
import type { Database } from '../../db/database.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';

/** What a fake pull reports of its load; every count not given is 0. */
export interface FakeLoad {
  readonly rowsRead?: number;
  readonly rowsLoaded?: number;
  readonly rowsRejected?: number;
  readonly rowsInserted?: number;
  readonly rowsUpdated?: number;
  readonly fileSha256?: string | null;
  readonly bytes?: number;
  readonly zipped?: boolean;
  readonly durationMs?: number;
}

/**
 * The committed `loads` row a real pull of `req` would leave, and the summary it would return: for
 * workflow tests whose pulls need no provider but whose loads the workflow and the warehouse must see.
 */
export async function recordCommittedLoad(
  db: Kysely<Database>,
  req: PullRequest,
  load: FakeLoad = {},
): Promise<LoadSummary> {
  const counts = {
    rowsRead: load.rowsRead ?? 0,
    rowsLoaded: load.rowsLoaded ?? load.rowsRead ?? 0,
    rowsRejected: load.rowsRejected ?? 0,
    rowsInserted: load.rowsInserted ?? 0,
    rowsUpdated: load.rowsUpdated ?? 0,
    rowsUnchanged: 0,
  };
  const row = await db
    .insertInto('loads')
    .values({
      source: req.source,
      ...(req.account === undefined ? {} : { account: req.account }),
      environment: 'staging',
      origin: 'workflow',
      format: req.source.startsWith('legacy') ? 'legacy' : 'report-json',
      status: 'committed',
      rows_read: counts.rowsRead,
      rows_loaded: counts.rowsLoaded,
      rows_rejected: counts.rowsRejected,
      rows_inserted: counts.rowsInserted,
      rows_updated: counts.rowsUpdated,
      rows_unchanged: counts.rowsUnchanged,
      file_sha256: load.fileSha256 ?? null,
      file_bytes: load.bytes ?? 0,
      zipped: load.zipped ?? false,
      workflow_id: req.workflowId ?? null,
    })
    .returning('load_id')
    .executeTakeFirstOrThrow();
  return {
    loadId: row.load_id,
    source: req.source,
    status: 'committed',
    ...counts,
    fileSha256: load.fileSha256 ?? null,
    bytes: load.bytes ?? 0,
    zipped: load.zipped ?? false,
    durationMs: load.durationMs ?? 1,
  };
}
