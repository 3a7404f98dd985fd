import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * A reconcile run over data nothing has written since the last run of the same range finds what that
 * run found (matching is a function of the data, the range, the settings and the due date). Such a run
 * reuses the stored findings instead of matching again (reconcile/matching-reuse.ts).
 *
 * "Nothing has written" is told by `recon_work.data_changes`: every statement that writes a table
 * matching reads (or a claims table) adds a row, through a statement trigger, inside the writer's own
 * transaction. A run records the sum of the weights it sees; the next run of the range reuses the
 * findings only if it sees the same sum. Rows are only ever added, except by a compaction that
 * replaces the rows it sees by one row of their total weight, so the sum grows with every committed
 * write. A sum, not a greatest id: a writer that took an id before a run and committed after it would
 * hide behind a greater id another writer committed in between.
 *
 * Statement triggers, not row triggers: a load of a million rows adds a handful of rows here. A
 * change counts for every account, except the claims a reconcile run writes: the run names its
 * account in the setting `recon.run_account` (reconcile/account-scope.ts), so that reconciling one
 * account does not make the next run of another match again.
 */
const WATCHED = [
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'provider_adjustments',
  'merchant_ledger',
  'notifications',
  'status_lookups',
  'fee_schedule',
  'transaction_matches',
  'return_matches',
  'notification_matches',
  'source_matches',
];

const FINDING_COLUMNS = `discrepancy_key text not null,
  kind text not null,
  rule text not null,
  transaction_id text,
  merchant_transaction_id text,
  return_transaction_id text,
  business_date date not null,
  currency char(3),
  expected jsonb,
  actual jsonb,
  expected_amount_cents bigint,
  actual_amount_cents bigint,
  difference_cents bigint,
  candidates jsonb`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table recon_work.data_changes (
    change_id bigint generated always as identity primary key,
    account text,
    weight bigint not null default 1 check (weight > 0),
    noted_at timestamptz not null default now()
  )`.execute(db);
  await sql`comment on table recon_work.data_changes is 'One row per statement that wrote a table matching reads (statement triggers), for the account of the reconcile run that wrote it, or for every account (null); a reconcile run compares the sum of weight with the one its range was last matched at.'`.execute(
    db,
  );
  // SECURITY DEFINER: every role that may write a watched table (the receiver, a load) notes the change,
  // without any right on recon_work.
  await sql`create function recon_work.note_data_change() returns trigger
    language plpgsql security definer set search_path = pg_catalog, recon_work as $$
    begin
      insert into recon_work.data_changes (account) values (nullif(current_setting('recon.run_account', true), ''));
      return null;
    end $$`.execute(db);
  for (const table of WATCHED) {
    await sql
      .raw(
        `create trigger ${table}_data_change after insert or update or delete or truncate on ${table}
          for each statement execute function recon_work.note_data_change()`,
      )
      .execute(db);
  }

  await sql`create table recon_work.matched_ranges (
    account text not null,
    range_from date not null,
    range_to date not null,
    fingerprint text not null,
    data_changes bigint not null,
    run_id bigint not null,
    matched jsonb not null,
    stored_at timestamptz not null default now(),
    primary key (account, range_from, range_to)
  )`.execute(db);
  await sql`comment on table recon_work.matched_ranges is 'The last matching of each range: the fingerprint of the code, settings and due date it ran with, the data_changes sum it saw, and its counts. Its findings are in matched_range_findings.'`.execute(
    db,
  );
  await sql
    .raw(
      `create table recon_work.matched_range_findings (
        account text not null,
        range_from date not null,
        range_to date not null,
        ${FINDING_COLUMNS},
        primary key (account, range_from, range_to, discrepancy_key),
        foreign key (account, range_from, range_to) references recon_work.matched_ranges on delete cascade
      )`,
    )
    .execute(db);
  await sql`comment on table recon_work.matched_range_findings is 'The findings of the last matching of each range of matched_ranges, as the run''s findings table held them.'`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table recon_work.matched_range_findings, recon_work.matched_ranges`.execute(db);
  for (const table of WATCHED) await sql.raw(`drop trigger ${table}_data_change on ${table}`).execute(db);
  await sql`drop function recon_work.note_data_change()`.execute(db);
  await sql`drop table recon_work.data_changes`.execute(db);
}
