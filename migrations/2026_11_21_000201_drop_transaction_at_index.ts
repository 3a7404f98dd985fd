import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
//
// provider_transactions_at_idx (transaction_at) served no query: matching and the reports scope
// provider_transactions by transaction_on (provider_transactions_on_idx), and the PENDING follow-up
// reads the partial index provider_transactions_pending_idx (transaction_at where status = 'PENDING').
// Maintaining it cost every loaded row an insertion into a randomly ordered index (timestamps do not
// follow the key order the loader writes in). An analyst's time range is served by transaction_on
// (the Eastern day) with transaction_at as a filter.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists provider_transactions_at_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index provider_transactions_at_idx on provider_transactions (transaction_at)`.execute(db);
}
