import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The account name check of 0010 (`account ~ '^[a-z0-9-]{1,32}$'`) is evaluated for every row written,
 * and PostgreSQL's regular expressions run a bounded repetition slowly: measured on 995,000 rows, the
 * check alone took 1.75 s (1.86 s to filter them against 0.12 s for `account = 'default'`), about a
 * third of inserting the matching run's claims into transaction_matches (5.4 s with it, 3.6 s
 * without), and the same per row in every load.
 *
 * The same rule, in a form that costs nothing for `default` (the account of every row of a
 * single-account warehouse) and 0.25 s per million rows for other names: the length tested apart and
 * an unbounded class. Each table's old check is replaced in one statement (never a moment without a
 * check), then validated, which reads the table once.
 */
const OLD_CHECK = `account ~ '^[a-z0-9-]{1,32}$'`;
const NEW_CHECK = `account = 'default' or (length(account) <= 32 and account ~ '^[a-z0-9-]+$')`;

const TABLES = [
  'loads',
  'rejected_rows',
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'provider_adjustments',
  'merchant_ledger',
  'notifications',
  'notification_quarantine',
  'status_lookups',
  'row_history',
  'pull_cursors',
  'reconcile_runs',
  'transaction_matches',
  'return_matches',
  'notification_matches',
  'source_matches',
  'discrepancies',
  'discrepancy_events',
  'discrepancy_totals',
];

async function replaceCheck(db: Kysely<any>, check: string): Promise<void> {
  for (const table of TABLES) {
    const name = `${table}_account_name`;
    await sql
      .raw(`alter table ${table} drop constraint ${name}, add constraint ${name} check (${check}) not valid`)
      .execute(db);
    await sql.raw(`alter table ${table} validate constraint ${name}`).execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  await replaceCheck(db, NEW_CHECK);
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceCheck(db, OLD_CHECK);
}
