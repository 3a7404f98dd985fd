import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * notifications_txn_idx goes back to (transaction_id), undoing 0046 (issue 30, section 2). In the
 * index's full order (transaction_id, received_at desc, notification_id desc) the planner read the
 * latest notifications of a full run over most of the history with one process: no sort was left to
 * share, so it chose a serial index scan over a Gather Merge. It spent less CPU than the parallel
 * plan (measured under load, where CPU was the only steady figure), but on a quiet machine the
 * statement took 4.3 s against 1.8 s by transaction_id alone, where two workers read the index and
 * sorted each transaction's few bodies (docs/benchmark-record.md §2).
 */

const INDEX = 'notifications_txn_idx';

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop index ${INDEX}`).execute(db);
  await sql.raw(`create index ${INDEX} on notifications (transaction_id)`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop index ${INDEX}`).execute(db);
  await sql
    .raw(`create index ${INDEX} on notifications (transaction_id, received_at desc, notification_id desc)`)
    .execute(db);
}
