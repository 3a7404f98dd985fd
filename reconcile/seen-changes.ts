import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { execStatement } from './rules/statement.ts';

/**
 * The last statement of a run that matched (not a reused one): the change log's rows that no run
 * needs any more are dropped. A change every kept date's snapshot saw is needed by no run: its
 * writer ended before them all (recon_work.matched_days; reconcile/incremental.ts).
 *
 * The key arrays are stored uncompressed and out of line (migration 0045: compressing them held the
 * loader's COPY up), so a delete of a row deletes every 2 kB chunk of its arrays from the TOAST table
 * one by one: after a load of a million rows, 0.49 s of a first run (docs/benchmark-record.md §2).
 * When every row of the log is one no run needs and no other transaction holds the table, the run
 * truncates it instead: the table's files are swapped at commit, whatever they hold. Neither path
 * ever waits:
 * - the lock is taken without waiting (NOWAIT): a load or a trigger that wrote keys and has not
 *   ended holds the table (ROW EXCLUSIVE until its commit), and the run deletes as before;
 * - once the run holds the table, no writer can add a row: the check reads every committed row
 *   (each statement of the run's READ COMMITTED transaction takes a new snapshot), and one any
 *   run still needs (its writer not seen by a kept date's snapshot, the run's own claim-move notes
 *   among them) sends the run back to the delete, its lock released with the savepoint;
 * - truncated, the table stays locked until the run commits, which follows at once: a writer of
 *   keys waits those few milliseconds, and no run with an older snapshot can read the table then
 *   (runs take recon_work.reconcile_lock one at a time).
 */
export async function dropSeenChanges(trx: Transaction<Database>): Promise<void> {
  if (await truncatedWhole(trx)) return;
  await execStatement(
    trx,
    sql`delete from recon_work.changed_keys
      where change_xid < (select min(pg_snapshot_xmin(m.seen)) from recon_work.matched_days m)`,
  );
}

/**
 * Truncates the change log when no transaction holds it and every kept date's snapshot saw the
 * writer of each of its rows. The delete's test (a writer older than every snapshot's oldest running
 * transaction) keeps rows that every snapshot saw while a transaction of any database of the server
 * ran beside them; a run's test of its changes (pg_visible_in_snapshot, reconcile/incremental.ts)
 * is the exact one, asked here of the kept dates' few distinct snapshots.
 */
async function truncatedWhole(trx: Transaction<Database>): Promise<boolean> {
  await sql`savepoint seen_changes`.execute(trx);
  try {
    await execStatement(trx, sql`lock table recon_work.changed_keys in access exclusive mode nowait`);
  } catch (error) {
    if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
    await sql`rollback to savepoint seen_changes`.execute(trx);
    return false;
  }
  // Empty, a row some kept date did not see, or no kept date at all: nothing to truncate.
  const all = await sql<{ seen: boolean | null }>`
    with snapshots as (select distinct m.seen::text as seen from recon_work.matched_days m)
    select bool_and(not exists (select 1 from snapshots s
        where not pg_visible_in_snapshot(c.change_xid, s.seen::pg_snapshot)))
      and exists (select 1 from snapshots) as seen
    from recon_work.changed_keys c`.execute(trx);
  if (all.rows[0]?.seen !== true) {
    await sql`rollback to savepoint seen_changes`.execute(trx);
    return false;
  }
  await execStatement(trx, sql`truncate recon_work.changed_keys`);
  await sql`release savepoint seen_changes`.execute(trx);
  return true;
}

/** SQLSTATE 55P03: lock_not_available (NOWAIT). */
const LOCK_NOT_AVAILABLE = '55P03';
