import { type RawBuilder, sql } from 'kysely';
import { exec, type RuleContext } from './statement.ts';
import { createWorkTable } from './work-tables.ts';

/**
 * The settlement roll-forward's kept items found by key (docs/architecture.md, "The roll-forward's
 * kept days"): their indexes, the disputed pairs and the days of a run over changed keys that reads
 * them by key, and the settings its statements are planned with. settlement-kept.ts keeps them.
 */

export const ACCOUNT = sql.raw(`current_setting('recon.run_account')`);
export const ITEMS = sql.raw('recon_work.settlement_kept_items');
export const DAYS = sql.raw('recon_work.settlement_kept_days');
export const SUMS = sql.raw('recon_work.settlement_kept_sums');

/** The key an item is named by: its one id (settlement_items fills one of the four). */
const ITEM_KEY = `coalesce('T:' || i.transaction_id, 'M:' || i.merchant_transaction_id,
  'R:' || i.return_transaction_id, 'A:' || i.adjustment_key)`;

/**
 * An item as the roll-forward holds it (its window, the kept items: recon_work.settlement_kept_items,
 * migration 0057), from a row `i` of settlement_items: the columns its days, disputed pairs and kept
 * sums read, and the item's key (ITEM_KEY) written once as item_key where the four ids were kept, each
 * read through ITEM_KEY again per item; the component, amount and fee, which only net_cents sums, are
 * not kept. Each column's name, type and value from `i`, in the kept table's order. A first run writes
 * every item of its range so (1,828,667 at 1,000,000 rows); the statements that read them again pay
 * for their width (docs/benchmark-record.md §2).
 */
const KEPT: readonly (readonly [name: string, type: string, value: string])[] = [
  ['account', 'text', 'i.account'],
  ['business_date', 'date', 'i.business_date'],
  ['currency', 'text', 'i.currency'],
  ['pair_key', 'text', 'i.pair_key'],
  ['item_key', 'text', ITEM_KEY],
  ['side', 'text', 'i.side'],
  ['net_cents', 'bigint', 'i.net_cents'],
  ['in_flight', 'boolean', 'i.in_flight'],
];

/** A kept item's columns, selected from a row `i` of settlement_items. */
export const KEPT_COLUMNS = KEPT.map(([name, , value]) => `${value} as ${name}`).join(', ');

/** A kept item's columns and types, as pg_attribute names them (keptTableFits compares the kept table with them). */
export const KEPT_SHAPE: readonly string[] = KEPT.map(([name, type]) => `${name} ${type}`);

/** An adjustment's kept item (its key is its adjustment key: ITEM_KEY). */
export const ADJUSTMENT = `i.item_key like 'A:%'`;

/** The odd items (in flight, or adjustments): the partial index settlement_kept_items_odd_idx's predicate. */
export const ODD = `(i.in_flight or ${ADJUSTMENT})`;

/**
 * An item set's sums of a day and currency, the kept sums' three columns (recon_work.settlement_kept_sums):
 * the items, the provider's net and the ledger's. One term for the days' sums of the window
 * (settlement.ts's DAYS), the sums a full run keeps (keepWindow reads those) and those a run over
 * changed keys writes or moves by difference (settlement-kept.ts), so that a kept sum and a day summed
 * again cannot differ in their definition. Unqualified: over one set of items.
 */
export const ITEM_SUMS = `count(*) as items,
  coalesce(sum(net_cents) filter (where side = 'provider'), 0)::bigint as provider_net,
  coalesce(sum(net_cents) filter (where side = 'ledger'), 0)::bigint as ledger_net`;

/**
 * What an item adds to its day's difference: the provider's net less the ledger's. One term for the
 * part explained of the window's days (settlement.ts's DAYS) and of the kept days (keptDays).
 */
export const SIGNED = `case when i.side = 'provider' then i.net_cents else -i.net_cents end`;

/**
 * The kept items by key, by pair and (the few) in flight or adjusted: a run over changed keys finds
 * the items it replaces and the days' disputed pairs through them (dropTouchedItems, keptDisputed)
 * instead of reading every kept item of its days (75,000 among 1,000,000 history rows: a cost that
 * grew with the history, docs/benchmark-record.md §1). A full run over a short range builds them
 * with its window (a few of its items); over most of the history it would cost the first run its
 * 2,000,000 items (1.6-2.3 s, §2), and a run over changed keys builds them (keyIndexes), once: the
 * runs over changed keys keep them up to date as they replace items.
 */
const KEY_INDEXES: Readonly<Record<string, RawBuilder<unknown>>> = {
  settlement_kept_items_key_idx: sql`(item_key)`,
  settlement_kept_items_pair_idx: sql`(pair_key)`,
  settlement_kept_items_odd_idx: sql`(business_date) where ${sql.raw(ODD.replace(/\bi\./g, ''))}`,
};

/**
 * How a run over changed keys reads its days' kept items: 'by key' through the key indexes, 'by day'
 * every item of its days (the block-range index), as before them.
 */
export type KeptRead = 'by key' | 'by day';

/**
 * Builds the key indexes (a full run of a short range, and a run over changed keys whose days are at
 * least a quarter of the kept days, where reading the days' items once costs about what a build
 * does), and says whether the kept items are read by key. A run over a few days of a long history
 * does not build them: the re-run after one change of a first run over 1,000,000 rows would pay the
 * 2,000,000 items' indexes (1.6-2.3 s) to spare reading one day's items (§1's first target).
 */
export async function keyIndexes(ctx: RuleContext, days?: readonly string[]): Promise<KeptRead> {
  const r = await sql<{ built: number; kept: number }>`select
      (select count(*)::int from pg_indexes where schemaname = 'recon_work' and tablename = 'settlement_kept_items'
        and indexname = any (${Object.keys(KEY_INDEXES)}::text[])) as built,
      (select count(*)::int from ${DAYS} where account = ${ACCOUNT}) as kept`.execute(ctx.trx);
  const { built, kept } = r.rows[0]!;
  if (built === Object.keys(KEY_INDEXES).length) return 'by key';
  if (days !== undefined && days.length * 4 < kept) return 'by day';
  for (const [name, columns] of Object.entries(KEY_INDEXES))
    await exec(ctx, sql`create index if not exists ${sql.raw(name)} on ${ITEMS} ${columns}`);
  return 'by key';
}

/**
 * The disputed pairs of a run over changed keys' days (settlement.ts's DISPUTED: an item named by an
 * open discrepancy of its day or matched by hand, settlement_named, or in flight), found by key among
 * the kept items, not by reading every item of the days. The items in flight are read through the
 * partial index of the odd items, whose predicate their condition states in full.
 */
export async function keptDisputed(ctx: RuleContext, days: readonly string[]): Promise<void> {
  const ofDays = sql`i.account = ${ACCOUNT} and i.business_date = any (${days}::date[])`;
  await byKeys(
    ctx,
    () =>
      createWorkTable(
        ctx,
        'settlement_disputed',
        sql`select i.business_date, i.pair_key
          from (select * from ${ITEMS} i where i.item_key = any (array(select key from settlement_named)) offset 0) i
          join settlement_named k on k.key = i.item_key and (k.business_date = i.business_date or k.business_date is null)
          where ${ofDays}
          union select i.business_date, i.pair_key from ${ITEMS} i
          where ${sql.raw(ODD)} and i.in_flight and ${ofDays}`,
      ),
    BY_KEY_ARRAYS,
  );
}

/**
 * The days of a run over changed keys (settlement.ts's DAYS, the same columns): both nets from the
 * kept sums, the part explained from the items of the disputed pairs, found by pair among the kept
 * items, not by reading every item of the days.
 */
export async function keptDays(ctx: RuleContext, days: readonly string[]): Promise<void> {
  await byKeys(
    ctx,
    sql`create temp table settlement_days on commit drop as
      select s.business_date, s.currency, s.provider_net, s.ledger_net, s.provider_net - s.ledger_net as difference,
        coalesce(e.explained, 0)::bigint as explained,
        s.provider_net - s.ledger_net - coalesce(e.explained, 0)::bigint as unexplained, s.items
      from ${SUMS} s
      left join (select i.business_date, i.currency,
          sum(${sql.raw(SIGNED)})::bigint as explained
        from (select * from ${ITEMS} i where i.pair_key = any (array(select pair_key from settlement_disputed)) offset 0) i
        join settlement_disputed d on d.pair_key = i.pair_key and d.business_date = i.business_date
        where i.account = ${ACCOUNT} group by i.business_date, i.currency) e
        on e.business_date = s.business_date and e.currency = s.currency
      where s.account = ${ACCOUNT} and s.business_date = any (${days}::date[])`,
    BY_KEY_ARRAYS,
  );
}

/**
 * Runs `statement` with the plans that read a few keys' rows by their indexes: sequential scans,
 * hash and merge joins priced out, on one core. Planned otherwise, the view's ledger branches hashed
 * every claim of the history to join a few thousand keys' entries (a parallel scan of
 * transaction_matches: a cost that grew with the history), and the parallel workers' start cost more
 * than the probes under load. The settings are the transaction's: read before, and given back after
 * (not in a finally: a failed statement aborts the run's transaction, whose rollback undoes them).
 */
const BY_KEYS: Readonly<Record<string, string>> = {
  enable_seqscan: 'off',
  enable_hashjoin: 'off',
  enable_mergejoin: 'off',
  max_parallel_workers_per_gather: '0',
};
/**
 * The kept items of a few thousand keys or pairs: one index scan of the keys given as an array (read
 * in the index's order, a descent per stretch of keys) and hashed joins, where a nested loop probed
 * the index once per key (about three times the server CPU for the disputed pairs' 5,400 named keys
 * among 1,000,000 history rows, issue 30).
 */
const BY_KEY_ARRAYS: Readonly<Record<string, string>> = {
  enable_seqscan: 'off',
  enable_nestloop: 'off',
  enable_mergejoin: 'off',
  max_parallel_workers_per_gather: '0',
};
export async function byKeys(
  ctx: RuleContext,
  statement: RawBuilder<unknown> | (() => Promise<unknown>),
  settings = BY_KEYS,
): Promise<void> {
  const names = Object.keys(settings);
  const set = (values: readonly string[]) =>
    exec(ctx, sql`select set_config(n, v, true) from unnest(${names}::text[], ${values}::text[]) s (n, v)`);
  const before = await sql<{ v: string }>`select current_setting(n) as v
    from unnest(${names}::text[]) with ordinality s (n, i) order by i`.execute(ctx.trx);
  await set(Object.values(settings));
  await (typeof statement === 'function' ? statement() : exec(ctx, statement));
  await set(before.rows.map((r) => r.v));
}
