import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The settlement roll-forward's kept items hold what it reads of an item, its key written once
 * (issue 30, section 2: the first run's roll-forward).
 *
 * A full run writes every item of its range into its window (1,828,667 items at 1,000,000 rows), sent
 * through the Gather to the leader, which writes them, and keeps the window as
 * recon_work.settlement_kept_items (0041). Each item was a whole row of settlement_items: its four
 * ids, of which one is filled, its component, amount and fee, which only its net_cents sums. The
 * roll-forward reads its day, currency, pair, side, net, whether it is in flight and its key (the
 * one id, prefixed with what it is), which it computed again from the four ids for every item it
 * read. A kept item is now those columns, its key once (item_key: 'T:' || transaction_id,
 * 'M:' || merchant_transaction_id, 'R:' || return_transaction_id or 'A:' || adjustment_key)
 * (reconcile/rules/settlement-kept-keys.ts, KEPT_COLUMNS).
 *
 * A cache (UNLOGGED): the table is made again empty in the new shape, and the kept days and sums
 * forgotten, so that every day is read from settlement_items and kept again by the next run. `down`
 * does the same in the shape of 0041 (settlement_items' columns).
 */

const ITEMS = 'recon_work.settlement_kept_items';

const ITEMS_COMMENT =
  "[pipeline only] The settlement roll-forward's kept items: of settlement_items' rows of the kept days as last read (a full run's window, then replaced key by key by the runs over changed keys), the columns the roll-forward reads and the item's key (item_key: T:, M:, R: or A: and its one id). A cache (UNLOGGED), rewritten by each full run.";

const OLD_COMMENT =
  "[pipeline only] The settlement roll-forward's kept items: settlement_items' rows of the kept days as last read (a full run's window, then replaced key by key by the runs over changed keys). A cache (UNLOGGED), rewritten by each full run.";

const NARROW = `select i.account, i.business_date, i.currency, i.pair_key,
    coalesce('T:' || i.transaction_id, 'M:' || i.merchant_transaction_id, 'R:' || i.return_transaction_id,
      'A:' || i.adjustment_key) as item_key,
    i.side, i.net_cents, i.in_flight
  from public.settlement_items i`;

async function remake(db: Kysely<any>, select: string, comment: string): Promise<void> {
  await sql.raw(`drop table ${ITEMS}`).execute(db);
  await sql.raw(`create unlogged table ${ITEMS} as ${select} with no data`).execute(db);
  await sql.raw(`comment on table ${ITEMS} is '${comment.replace(/'/g, "''")}'`).execute(db);
  await sql
    .raw(`create index settlement_kept_items_day_idx on ${ITEMS} using brin (business_date)`)
    .execute(db);
  await sql`delete from recon_work.settlement_kept_days`.execute(db);
  await sql`delete from recon_work.settlement_kept_sums`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await remake(db, NARROW, ITEMS_COMMENT);
}

export async function down(db: Kysely<any>): Promise<void> {
  await remake(db, 'select * from public.settlement_items', OLD_COMMENT);
}
