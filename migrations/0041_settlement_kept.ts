import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The settlement roll-forward's kept items (issue 30, section 1: the nightly's cost follows the day's
 * changes; docs/architecture.md, "The roll-forward's kept days").
 *
 * A run over changed keys read each changed day's items through settlement_items, a union of joins
 * of the provider, ledger and claims tables whose cost grew with the history. A full run now keeps
 * the items its roll-forward read (settlement_kept_items: its window, the work table renamed, so
 * that keeping costs a block-range index and no copy) and which days they are
 * (settlement_kept_days, with the run that last brought each day up to date). A run over changed
 * keys replaces the kept items of the keys its change touches by their items now (read through the
 * view by key), and reads its days' items from the kept table.
 *
 * A cache, as matched_ranges (0040): UNLOGGED, without foreign keys. A crash empties both tables, and
 * a day not kept, kept by another run than the one that last matched the date, or read with another
 * definition of settlement_items is read from the view, as before: never a wrong total.
 */

const ITEMS_COMMENT =
  "[pipeline only] The settlement roll-forward's kept items: settlement_items' rows of the kept days as last read (a full run's window, then replaced key by key by the runs over changed keys). A cache (UNLOGGED), rewritten by each full run.";

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unlogged table recon_work.settlement_kept_days (
      account text not null, business_date date not null, run_id bigint not null, view_digest text not null,
      primary key (account, business_date))`.execute(db);
  await sql`comment on table recon_work.settlement_kept_days is '[pipeline only] The days whose items settlement_kept_items holds: the run that last brought each up to date and the md5 of settlement_items'' definition it read. A cache (UNLOGGED): a day not here is read from settlement_items.'`.execute(
    db,
  );
  await sql`create unlogged table recon_work.settlement_kept_items as
    select * from public.settlement_items with no data`.execute(db);
  await sql
    .raw(`comment on table recon_work.settlement_kept_items is '${ITEMS_COMMENT.replace(/'/g, "''")}'`)
    .execute(db);
  await sql`create index settlement_kept_items_day_idx on recon_work.settlement_kept_items using brin (business_date)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table recon_work.settlement_kept_items`.execute(db);
  await sql`drop table recon_work.settlement_kept_days`.execute(db);
}
