import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
//
// Two indexes that no query reads, and that every loaded row paid for (about 1.3 s each per 1,000,000
// rows loaded, measured with `npm run bench`):
//
// - provider_transactions_load_idx (load_id): matching, the reports, the views and the pull cursors
//   never select provider rows by load. "Which rows did load N change" is a one-off audit: row_history
//   names the load of every restatement, and a scan of the table answers the rest.
// - legacy_transactions_mtid_idx (merchant_transaction_id): matching reads legacy_transactions by
//   transaction_id only (its primary key). A merchant reference is looked up in provider_transactions
//   (provider_transactions_mtid_idx), which also holds every legacy row without a report API row,
//   and leads to the legacy row by transaction_id.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists provider_transactions_load_idx`.execute(db);
  await sql`drop index if exists legacy_transactions_mtid_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index provider_transactions_load_idx on provider_transactions (load_id)`.execute(db);
  await sql`create index legacy_transactions_mtid_idx on legacy_transactions (merchant_transaction_id)`.execute(
    db,
  );
}
