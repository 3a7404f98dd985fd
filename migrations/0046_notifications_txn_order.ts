import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * notifications_txn_idx (transaction_id) becomes (transaction_id, received_at desc, notification_id
 * desc): a transaction's bodies in the order that says which one speaks for it, the latest (issue 30,
 * section 2). A full run over most of the history reads every transaction notification of the
 * account in this index's order (the latest notifications, reconcile/rules/claims.ts); by
 * transaction_id alone, its parallel workers sorted each transaction's bodies again (an incremental
 * sort) before the leader's `distinct on` and windows. In the index's order they need no sort: the
 * statement took 2.0-2.2 s of server CPU against 2.7-2.9 s at 1,000,000 rows
 * (docs/benchmark-record.md §2). The index keeps its name and answers what it answered by
 * transaction_id (its first column); its entries are 16 bytes wider.
 */

const INDEX = 'notifications_txn_idx';

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop index ${INDEX}`).execute(db);
  await sql
    .raw(`create index ${INDEX} on notifications (transaction_id, received_at desc, notification_id desc)`)
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop index ${INDEX}`).execute(db);
  await sql.raw(`create index ${INDEX} on notifications (transaction_id)`).execute(db);
}
