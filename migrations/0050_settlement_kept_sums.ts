import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The settlement roll-forward's kept sums (issue 30, section 1: the nightly's cost follows the day's
 * changes, not its range; docs/architecture.md, "The roll-forward's kept days").
 *
 * A run over changed keys summed every kept item of its days (settlement_kept_items, 0041) for both
 * nets of each day and currency: 75,000 items for 30 days among 1,000,000 history rows, a cost that
 * grew with the history. The sums are kept beside the items, per kept day and currency (its items,
 * the provider's net, the ledger's), written by a full run with its days and brought up to date by
 * difference by each run over changed keys as it replaces items.
 *
 * A cache, as the kept items: UNLOGGED, without foreign keys. The kept days are forgotten here, so
 * that every day is read from settlement_items and kept again, its sums with it, by the next run:
 * a kept day never goes without its sums.
 */

const COMMENT =
  "[pipeline only] The settlement roll-forward's kept sums: per kept day (settlement_kept_days) and currency, the count and the provider's and ledger's nets of its kept items, written with them (a full run) and brought up to date by difference (the runs over changed keys). A cache (UNLOGGED).";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unlogged table recon_work.settlement_kept_sums (
      account text not null check (account = 'default' or (length(account) <= 32 and account ~ '^[a-z0-9-]+$')),
      business_date date not null, currency text not null,
      items bigint not null, provider_net bigint not null, ledger_net bigint not null,
      primary key (account, business_date, currency))`.execute(db);
  await sql
    .raw(`comment on table recon_work.settlement_kept_sums is '${COMMENT.replace(/'/g, "''")}'`)
    .execute(db);
  await sql`delete from recon_work.settlement_kept_days`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table recon_work.settlement_kept_sums`.execute(db);
}
