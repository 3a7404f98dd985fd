import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Secondary indexes of the tables the legacy loader writes, each kept only for a query that needs it
 * (docs/architecture.md, "Indexes of the provider tables", names the query and shows its plan with
 * and without the index). Every legacy line writes a row of legacy_transactions and one of
 * provider_transactions, and each secondary B-tree costs every row an insertion.
 *
 * - legacy_transactions_on_idx (transaction_on) becomes a BRIN index. Its readers ask for a range of
 *   days (the volume check's rows per day, analysts' month queries); rows arrive a day or a window at a
 *   time, so the days follow the table's physical order and a block-range summary finds them. A BRIN
 *   index is written once per range of pages instead of once per row. `autosummarize` summarises a
 *   range as soon as it is full, so the newest rows do not stay unsummarised (and read) until a vacuum.
 * - provider_transactions_pending_idx (transaction_at where status = 'PENDING') goes: nothing reads it
 *   since the follow-up of non-final transactions reads provider_transactions_non_final_idx (account,
 *   transaction_on where status = 'PENDING', migration 0015) and orders those few rows itself.
 *
 * Both are built without a long lock on a table of millions of rows: BRIN builds read the table once
 * and write a few pages; dropping an index is immediate.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index legacy_transactions_on_idx`.execute(db);
  await sql`create index legacy_transactions_on_idx on legacy_transactions using brin (transaction_on)
    with (pages_per_range = 32, autosummarize = on)`.execute(db);
  await sql`drop index provider_transactions_pending_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index provider_transactions_pending_idx on provider_transactions (transaction_at)
    where status = 'PENDING'`.execute(db);
  await sql`drop index legacy_transactions_on_idx`.execute(db);
  await sql`create index legacy_transactions_on_idx on legacy_transactions (transaction_on)`.execute(db);
}
