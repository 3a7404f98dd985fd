import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
// The match tables are rebuilt by every reconcile run for millions of rows: a foreign key costs a
// trigger and an index probe per row (most of a run's time on 1M rows). The claims stay enforced by
// the UNIQUE constraints on each side; the referenced rows are only ever replaced by upserts (same
// key), and matching deletes the claims of rows it no longer sees. Also: tables created by later
// migrations are readable by recon_analyst by default (personal data must be revoked explicitly).

const FOREIGN_KEYS: [string, string][] = [
  ['transaction_matches', 'transaction_matches_transaction_id_fkey'],
  ['transaction_matches', 'transaction_matches_merchant_transaction_id_fkey'],
  ['transaction_matches', 'transaction_matches_run_id_fkey'],
  ['return_matches', 'return_matches_return_transaction_id_fkey'],
  ['return_matches', 'return_matches_original_transaction_id_fkey'],
  ['return_matches', 'return_matches_ledger_merchant_transaction_id_fkey'],
  ['return_matches', 'return_matches_run_id_fkey'],
  ['notification_matches', 'notification_matches_notification_id_fkey'],
  ['notification_matches', 'notification_matches_run_id_fkey'],
  ['source_matches', 'source_matches_transaction_id_fkey'],
  ['source_matches', 'source_matches_legacy_transaction_id_fkey'],
  ['source_matches', 'source_matches_run_id_fkey'],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, constraint] of FOREIGN_KEYS) {
    await sql.raw(`alter table ${table} drop constraint if exists ${constraint}`).execute(db);
  }
  await sql
    .raw(`alter default privileges in schema public grant select on tables to recon_analyst`)
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(`alter default privileges in schema public revoke select on tables from recon_analyst`)
    .execute(db);
  await sql
    .raw(
      `alter table transaction_matches
         add foreign key (transaction_id) references provider_transactions (transaction_id) on delete cascade,
         add foreign key (merchant_transaction_id) references merchant_ledger (merchant_transaction_id) on delete cascade,
         add foreign key (run_id) references reconcile_runs (run_id)`,
    )
    .execute(db);
  await sql
    .raw(
      `alter table return_matches
         add foreign key (return_transaction_id) references provider_returns (return_transaction_id) on delete cascade,
         add foreign key (original_transaction_id) references provider_transactions (transaction_id) on delete set null,
         add foreign key (ledger_merchant_transaction_id) references merchant_ledger (merchant_transaction_id) on delete set null,
         add foreign key (run_id) references reconcile_runs (run_id)`,
    )
    .execute(db);
  await sql
    .raw(
      `alter table notification_matches
         add foreign key (notification_id) references notifications (notification_id) on delete cascade,
         add foreign key (run_id) references reconcile_runs (run_id)`,
    )
    .execute(db);
  await sql
    .raw(
      `alter table source_matches
         add foreign key (transaction_id) references provider_transactions (transaction_id) on delete cascade,
         add foreign key (legacy_transaction_id) references legacy_transactions (transaction_id) on delete cascade,
         add foreign key (run_id) references reconcile_runs (run_id)`,
    )
    .execute(db);
}
