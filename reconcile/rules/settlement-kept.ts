import { type RawBuilder, sql } from 'kysely';
import { rangeHoldsMostOfHistory } from './scope.ts';
import {
  ACCOUNT,
  byKeys,
  ADJUSTMENT,
  DAYS,
  ITEM_SUMS,
  ITEMS,
  KEPT_COLUMNS,
  KEPT_SHAPE,
  keyIndexes,
  type KeptRead,
  ODD,
  SUMS,
} from './settlement-kept-keys.ts';
import { exec, type RuleContext } from './statement.ts';

/**
 * The settlement roll-forward's kept items (migration 0041; docs/architecture.md, "The roll-forward's
 * kept days"). A full run keeps the items its roll-forward read (its window, renamed: no copy) as the
 * account's only kept days. A run over changed keys replaces the kept items of the keys its change
 * touches by their items now, read through settlement_items by key (an index probe per branch), and
 * reads the items of its days from the kept table (a block-range index on the day) instead of the
 * view: the view's joins of the provider, ledger and claims tables cost what the history holds, the
 * kept table what the days hold.
 *
 * Why a kept day can be trusted: the keys a run gathers are every key written since its dates' last
 * runs (reconcile/incremental.ts), and every item whose value a write or the run's own claims can
 * move is found from those keys (touchedKeys) and replaced on the days the run computes, which are
 * the days whose items can have changed (scope_days, returns-scope.ts). A day is read from here only
 * when the run that last matched the date (recon_work.matched_days.run_id) is the one that last
 * brought the day up to date, the view is defined as when the day was read, and the date's keys were
 * gathered (not a date of a group looked at whole: seen_groups). A run forgets the kept days outside
 * its range (it does not keep them current). Anything else, an empty cache after a crash among it,
 * is read from the view and kept again.
 */

const ITEMS_COMMENT = sql.lit(
  "[pipeline only] The settlement roll-forward's kept items: of settlement_items' rows of the kept days as last read (a full run's window, then replaced key by key by the runs over changed keys), the columns the roll-forward reads and the item's key (item_key: T:, M:, R: or A: and its one id). A cache (UNLOGGED), rewritten by each full run.",
);

/**
 * The views settlement_items is made of, and settlement_range_items, which a full run's window reads
 * (migration 0043): the definition of an item is theirs.
 */
const ITEM_VIEWS = [
  'public.settlement_items',
  'recon_work.settlement_other_items',
  'recon_work.settlement_ledger_payments',
  'recon_work.settlement_range_items',
];

/** The definition of settlement_items a day was read with: a migration that changes it changes this. */
async function viewDigest(ctx: RuleContext): Promise<string> {
  const r = await sql<{ d: string }>`select md5(string_agg(pg_get_viewdef(v::regclass), ';' order by o)) as d
    from unnest(${ITEM_VIEWS}::text[]) with ordinality as x(v, o)`.execute(ctx.trx);
  return r.rows[0]!.d;
}

/**
 * A full run keeps its window (the work table settlement_window, analysed) as the kept items: the
 * table is renamed, not copied, and indexed by a block-range index on the day (one read of it). Its
 * days become the only kept days, of any account: the kept table now holds this run's items only.
 */
export async function keepWindow(ctx: RuleContext): Promise<void> {
  const digest = await viewDigest(ctx);
  await exec(ctx, sql`drop view settlement_window`);
  await exec(ctx, sql`drop table ${ITEMS}`);
  await exec(ctx, sql`alter table recon_work.run_settlement_window rename to settlement_kept_items`);
  await exec(ctx, sql`comment on table ${ITEMS} is ${ITEMS_COMMENT}`);
  await exec(ctx, sql`create index settlement_kept_items_day_idx on ${ITEMS} using brin (business_date)`);
  if (!(await rangeHoldsMostOfHistory(ctx))) await keyIndexes(ctx);
  await exec(ctx, sql`delete from ${DAYS}`);
  await exec(
    ctx,
    sql`insert into ${DAYS} (account, business_date, run_id, view_digest)
      select ${ACCOUNT}, d::date, ${ctx.runId}::bigint, ${digest}
      from generate_series(${ctx.from}::date, ${ctx.to}::date, interval '1 day') d`,
  );
  // The days' sums are the run's (settlement_days, the window's items summed by day and currency).
  await exec(ctx, sql`delete from ${SUMS}`);
  await exec(
    ctx,
    sql`insert into ${SUMS} (account, business_date, currency, items, provider_net, ledger_net)
      select ${ACCOUNT}, business_date, currency, items, provider_net, ledger_net from settlement_days`,
  );
}

/**
 * A run over changed keys: brings the kept items of `days` (scope_days) up to date (the touched keys'
 * items replaced, the days it cannot trust read from the view whole) and returns true; or false when
 * the kept table cannot take the view's rows (its columns are not the view's), and the caller reads
 * the days from the view.
 */
export async function rollKeptDays(ctx: RuleContext, days: readonly string[]): Promise<KeptRead | false> {
  const digest = await viewDigest(ctx);
  // The kept days outside the range, and their items: this run does not keep them current. The days
  // as values: the block-range index is used for them (over `array(select ...)` the planner read
  // every kept item: 2.4-2.7 s at 2,000,000 items, load 12).
  const gone = await sql<{ day: string }>`delete from ${DAYS} where account = ${ACCOUNT}
      and business_date not between ${ctx.from}::date and ${ctx.to}::date
    returning business_date::text as day`.execute(ctx.trx);
  if (gone.rows.length > 0) {
    const forgotten = gone.rows.map((r) => r.day);
    await exec(
      ctx,
      sql`delete from ${ITEMS} i where i.account = ${ACCOUNT} and i.business_date = any (${forgotten}::date[])`,
    );
    await exec(
      ctx,
      sql`delete from ${SUMS} where account = ${ACCOUNT} and business_date = any (${forgotten}::date[])`,
    );
  }
  if (!(await keptTableFits(ctx))) {
    await exec(ctx, sql`delete from ${DAYS} where account = ${ACCOUNT}`);
    await exec(ctx, sql`delete from ${SUMS} where account = ${ACCOUNT}`);
    return false;
  }
  const read = await keyIndexes(ctx, days);
  const trusted = await trustedDays(ctx, digest);
  const reread = days.filter((d) => !trusted.includes(d));
  await touchedKeys(ctx);
  await exec(
    ctx,
    sql`create temp table kept_delta (business_date date, currency text, items bigint, provider_net bigint,
      ledger_net bigint) on commit drop`,
  );
  await dropTouchedItems(ctx, days, reread, read);
  await newItems(ctx, reread);
  await replaceItems(ctx, days, reread);
  await exec(
    ctx,
    sql`insert into ${DAYS} (account, business_date, run_id, view_digest)
      select ${ACCOUNT}, d, ${ctx.runId}::bigint, ${digest} from unnest(${reread}::date[]) d
      on conflict (account, business_date) do update set run_id = excluded.run_id, view_digest = excluded.view_digest`,
  );
  await exec(
    ctx,
    sql`update ${DAYS} set run_id = ${ctx.runId}::bigint
      where account = ${ACCOUNT} and business_date = any (${trusted}::date[])`,
  );
  return read;
}

/**
 * A run over changed keys reads its days' items where they are kept, once they are brought up to
 * date: `settlement_window` is a temporary view of the kept items of `days` (the caller drops it),
 * not a copy. Copied into the run's work table and analysed first, the window, its disputed pairs
 * and the days' sums cost 250 ms of server CPU against 140 ms read from here (75,000 kept items
 * among 1,000,000 history rows, medians of 8 alternated runs, load 8-9). A view takes no parameters:
 * the days, dates the run read from scope_days, are written into it.
 */
export async function keptWindow(ctx: RuleContext, days: readonly string[]): Promise<void> {
  const ofDays = sql.lit(`{${days.join(',')}}`);
  await exec(
    ctx,
    sql`create temp view settlement_window as select * from ${ITEMS} i
      where i.account = ${ACCOUNT} and i.business_date = any (${ofDays}::date[])`,
  );
}

/**
 * What `rows` (items, of the days the run does not read again whole) add to the kept sums, with
 * `sign`: a statement's part that writes kept_delta, applied by replaceItems.
 */
function delta(sign: '+' | '-', rows: string, reread: readonly string[]): RawBuilder<unknown> {
  const s = sql.raw(sign);
  return sql`insert into kept_delta select business_date, currency, ${s}items, ${s}provider_net, ${s}ledger_net
    from (select business_date, currency, ${sql.raw(ITEM_SUMS)} from ${sql.raw(rows)}
      where not business_date = any (${reread}::date[]) group by business_date, currency) d`;
}

/**
 * The kept items of `days` replaced by kept_new's (those of the touched keys, every item of the days
 * read again whole), and the days' kept sums with them: those of a day read again whole are its
 * items summed (they are all in kept_new), the others' are brought up to date by difference
 * (kept_delta: the items deleted, dropTouchedItems and below, less, the items inserted, more).
 */
async function replaceItems(
  ctx: RuleContext,
  days: readonly string[],
  reread: readonly string[],
): Promise<void> {
  const ofDays = sql`${days}::date[]`;
  // An item now on a kept day the run does not compute: that day is no longer known to be current.
  const notCurrent = sql`(select business_date from kept_new where not business_date = any (${ofDays}))`;
  await exec(ctx, sql`delete from ${DAYS} where account = ${ACCOUNT} and business_date in ${notCurrent}`);
  await exec(ctx, sql`delete from ${SUMS} where account = ${ACCOUNT} and business_date in ${notCurrent}`);
  // An item of a day read again whole whose key was kept on another of the days.
  if (reread.length > 0)
    await exec(
      ctx,
      sql`with gone as (delete from ${ITEMS} i where i.account = ${ACCOUNT} and i.business_date = any (${ofDays})
          and i.item_key in (select item_key from kept_new where business_date = any (${reread}::date[]))
          returning i.business_date, i.currency, i.side, i.net_cents)
        ${delta('-', 'gone', reread)}`,
    );
  await exec(ctx, sql`insert into ${ITEMS} select * from kept_new where business_date = any (${ofDays})`);
  await exec(
    ctx,
    sql`with n as (select * from kept_new where business_date = any (${ofDays})) ${delta('+', 'n', reread)}`,
  );
  await exec(
    ctx,
    sql`delete from ${SUMS} where account = ${ACCOUNT} and business_date = any (${reread}::date[])`,
  );
  await exec(
    ctx,
    sql`insert into ${SUMS} (account, business_date, currency, items, provider_net, ledger_net)
      select ${ACCOUNT}, business_date, currency, ${sql.raw(ITEM_SUMS)}
      from kept_new where business_date = any (${reread}::date[]) group by business_date, currency`,
  );
  await exec(
    ctx,
    sql`insert into ${SUMS} as s (account, business_date, currency, items, provider_net, ledger_net)
      select ${ACCOUNT}, business_date, currency, sum(items), sum(provider_net), sum(ledger_net)
      from kept_delta group by business_date, currency
      on conflict (account, business_date, currency) do update set items = s.items + excluded.items,
        provider_net = s.provider_net + excluded.provider_net, ledger_net = s.ledger_net + excluded.ledger_net`,
  );
  await exec(
    ctx,
    sql`delete from ${SUMS} where account = ${ACCOUNT} and business_date = any (${ofDays}) and items = 0`,
  );
}

/**
 * Whether the kept table has a kept item's columns (KEPT_SHAPE: a migration may have changed them
 * since, as 0057 did; its table is then empty until a full run keeps its window).
 */
async function keptTableFits(ctx: RuleContext): Promise<boolean> {
  const r = await sql<{
    fits: boolean;
  }>`select (select array_agg(attname::text || ' ' || atttypid::regtype::text
      order by attnum) from pg_attribute
      where attrelid = 'recon_work.settlement_kept_items'::regclass and attnum > 0 and not attisdropped)
    = ${KEPT_SHAPE}::text[] as fits`.execute(ctx.trx);
  return r.rows[0]!.fits;
}

/** The range's kept days that can be trusted (see the module's comment). */
async function trustedDays(ctx: RuleContext, digest: string): Promise<string[]> {
  const r = await sql<{ day: string }>`select k.business_date::text as day from ${DAYS} k
    join matched_before m on m.business_date = k.business_date and m.run_id = k.run_id
    where k.account = ${ACCOUNT} and k.view_digest = ${digest}
      and k.business_date between ${ctx.from}::date and ${ctx.to}::date
      and k.business_date not in (select unnest(dates) from seen_groups where whole)`.execute(ctx.trx);
  return r.rows.map((x) => x.day);
}

/** Whether the run has the temporary relation `name` (the claims' work tables, when claims ran). */
async function has(ctx: RuleContext, name: string): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`select to_regclass(${name}) is not null as ok`.execute(ctx.trx);
  return r.rows[0]!.ok;
}

/**
 * kept_touched: the keys of every item whose value the run's changes can have moved. An item depends
 * on its own row and on what pairs it: a ledger entry on its claim (transaction_matches,
 * return_matches) and on the provider row or return that claims it (its date, fee, in-flight status
 * and type), a RETURN entry on its original entry's type, a REPRESENTMENT entry on the provider row
 * its transaction id names; a return on its original's type. The rows are the changed keys
 * (changed_t, changed_m, changed_r) and the claims this run may have moved (facts and ranked:
 * claims.ts; scope_r: returns.ts); an item's new partner is found through the claims, its old one
 * among the kept items of the same pair (dropTouchedItems). Adjustments without a transaction id are
 * noted by their dates only (migration 0035): every adjustment of the changed days, now here, kept
 * ones by dropTouchedItems. Their insert notes nothing (no key, and 0035 notes the dates of updates
 * and deletes): every run looks at the range's adjustments (scope_adj, returns-scope.ts), and their
 * items are read again with them, or a new one was never kept (test/integration/settlement-kept.test.ts).
 */
async function touchedKeys(ctx: RuleContext): Promise<void> {
  const claimed = [sql`select key from changed_t`];
  if (await has(ctx, 'facts')) claimed.push(sql`select transaction_id from facts`);
  if (await has(ctx, 'ranked')) claimed.push(sql`select transaction_id from ranked`);
  await exec(ctx, sql`create temp table kept_t on commit drop as ${sql.join(claimed, sql` union `)}`);
  await exec(
    ctx,
    sql`create temp table kept_r on commit drop as
      select key from changed_r union select return_transaction_id from scope_r
      union select r.return_transaction_id from provider_returns r
        where r.original_transaction_id = any (array(select key from changed_t))`,
  );
  const t = sql`array(select key from kept_t)`;
  const m = sql`array(select key from changed_m)`;
  await exec(
    ctx,
    sql`create temp table kept_touched on commit drop as
      select 'T:' || key as key from kept_t where key is not null
      union select 'R:' || key from kept_r where key is not null
      union select 'M:' || key from changed_m
      union select 'M:' || merchant_transaction_id from scope_l
      union select 'M:' || mtid from scope_rl
      union select 'M:' || l.merchant_transaction_id from merchant_ledger l where l.original_merchant_transaction_id = any (${m})
      union select 'M:' || l.merchant_transaction_id from merchant_ledger l where l.transaction_id = any (${t})
      union select 'M:' || tm.merchant_transaction_id from transaction_matches tm where tm.transaction_id = any (${t})
      union select 'M:' || rm.ledger_merchant_transaction_id from return_matches rm
        where rm.return_transaction_id = any (array(select key from kept_r)) and rm.ledger_merchant_transaction_id is not null
      union select 'A:' || a.adjustment_key from provider_adjustments a where a.transaction_id = any (${t})
      union select 'A:' || a.adjustment_key from provider_adjustments a
        where a.adjusted_on = any (array(select business_date from changed_days))
      union select 'A:' || adjustment_key from scope_adj`,
  );
}

/**
 * Deletes the kept items of `days` that the run replaces, in one read of the days' kept items: those
 * of the days read again whole (`reread`), of the touched keys, of the old partners of a touched
 * provider row or return (the same pair) and every adjustment; the partners and adjustments join
 * kept_touched, whose items are read again by key. A table of the days' keys, pairs and row ids,
 * read twice more to find them and once for the delete, cost 90 ms of server CPU against 60 ms for
 * this statement (75,000 kept items among 1,000,000 history rows, medians of 8 alternated runs).
 */
async function dropTouchedItems(
  ctx: RuleContext,
  days: readonly string[],
  reread: readonly string[],
  read: KeptRead,
): Promise<void> {
  const pairs = sql`(select 'T:' || key from kept_t union all select 'R:' || key from kept_r)`;
  const touched = sql`insert into kept_touched (key)
    select key from gone where pair_key in ${pairs} or key like 'A:%' except select key from kept_touched`;
  const gone = sql`returning i.item_key as key, i.pair_key, i.business_date, i.currency, i.side, i.net_cents`;
  if (read === 'by day') {
    await exec(
      ctx,
      sql`with gone as (delete from ${ITEMS} i where i.account = ${ACCOUNT} and i.business_date = any (${days}::date[])
          and (i.business_date = any (${reread}::date[]) or i.item_key in (select key from kept_touched)
            or i.pair_key in ${pairs} or ${sql.raw(ADJUSTMENT)}) ${gone}),
        touched as (${touched})
        ${delta('-', 'gone', reread)}`,
    );
    return;
  }
  const rows = sql`select i.ctid from ${ITEMS} i where i.item_key = any (array(select key from kept_touched))
    union all select i.ctid from ${ITEMS} i where i.pair_key = any (array${pairs})
    union all select i.ctid from ${ITEMS} i where ${sql.raw(ODD)}
      and ${sql.raw(ADJUSTMENT)} and i.business_date = any (${days}::date[])
    union all select i.ctid from ${ITEMS} i where i.business_date = any (${reread}::date[])`;
  await byKeys(
    ctx,
    sql`with gone as (delete from ${ITEMS} i where i.ctid = any (array(${rows}))
        and i.account = ${ACCOUNT} and i.business_date = any (${days}::date[])
        ${gone}),
      touched as (${touched})
      ${delta('-', 'gone', reread)}`,
  );
}

/**
 * kept_new: the items of the touched keys as settlement_items gives them now, read by key (an index
 * probe per branch of the view), and every item of the days read again (each row once). Each of the
 * four parts reads its keys from kept_touched (an array the statement computes), and the parts are
 * appended, not made distinct: an item has one of the four ids, so no item is in two parts. As values
 * made distinct the statement took 140 ms of server CPU against 130 ms (3,300 keys among 1,000,000
 * history rows, medians of 8 alternated runs): the planner weighed every key in every branch.
 */
async function newItems(ctx: RuleContext, reread: readonly string[]): Promise<void> {
  const items = (where: RawBuilder<unknown>) =>
    sql`select ${sql.raw(KEPT_COLUMNS)} from (select * from public.settlement_items where ${where} offset 0) i
      where i.account = ${ACCOUNT}`;
  const keys = (prefix: string) =>
    sql`array(select substr(key, 3) from kept_touched where key like ${`${prefix}:%`})`;
  const parts = [
    items(sql`transaction_id = any (${keys('T')})`),
    items(sql`merchant_transaction_id = any (${keys('M')})`),
    items(sql`return_transaction_id = any (${keys('R')})`),
    items(sql`adjustment_key = any (${keys('A')})`),
  ];
  await byKeys(ctx, sql`create temp table kept_new on commit drop as ${sql.join(parts, sql` union all `)}`);
  // The days read again whole: their items by the days' indexes, those already read by key once.
  if (reread.length > 0)
    await exec(
      ctx,
      sql`insert into kept_new ${items(sql`business_date = any (${reread}::date[])`)} except select * from kept_new`,
    );
}
