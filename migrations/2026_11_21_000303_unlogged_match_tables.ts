import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
// The match tables are derived data that every reconcile run rewrites for its range: writing them
// to the WAL doubled the cost of a first run over a million rows. Unlogged, they are emptied by a
// crash of the server (not of a run), and the next reconcile run of each range rebuilds them; the
// discrepancies and their events, which are history, stay logged.

const TABLES = ['transaction_matches', 'return_matches', 'notification_matches', 'source_matches'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql.raw(`alter table ${table} set unlogged`).execute(db);
  await sql
    .raw(
      `comment on table notification_matches is 'Notifications matched to the provider transaction or return they announce. UNIQUE on each side: one notification per provider row (the latest distinct body), one provider row per notification. Unlogged: rebuilt by the next reconcile run after a server crash.'`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on table transaction_matches is 'Provider transactions matched to merchant ledger entries by merchant transaction id. UNIQUE on each side: a provider transaction claims at most one ledger entry and a ledger entry is claimed at most once, so duplicates can never both match. Unlogged: rebuilt by the next reconcile run after a server crash.'`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql.raw(`alter table ${table} set logged`).execute(db);
}
