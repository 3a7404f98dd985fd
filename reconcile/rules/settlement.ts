import { sql } from 'kysely';
import type { Rule } from './rule.ts';
import { manuallyMatchedIds } from './manual-matches.ts';
import { rangeHoldsMostOfHistory } from './scope.ts';
import { analyzeWorkTables, createWorkTable, workTable } from './work-tables.ts';
import { keepWindow, keptWindow, rollKeptDays } from './settlement-kept.ts';
import {
  ITEM_SUMS,
  KEPT_COLUMNS,
  keptDays,
  keptDisputed,
  type KeptRead,
  SIGNED,
} from './settlement-kept-keys.ts';
import { toSql } from './sql-terms.ts';
import { exec, type RuleContext } from './statement.ts';
import { dueThroughFor } from './tolerance-terms.ts';

/**
 * The settlement roll-forward (migration 0029: settlement_items, daily_settlement_totals): per
 * Eastern day and currency, the provider's net against the ledger's. The difference is explained by
 * the movements that an open discrepancy of the day names (either side of a pair: a transaction and the ledger
 * entry it claims, a return and its booking), or that is still in flight (a ledger entry whose provider
 * transaction is PENDING); what is left, the remainder nothing explains, is a
 * discrepancy of its own. This rule runs after every other: the open discrepancies of the range's
 * days are the run's findings.
 */

const ADJUSTMENT_PREFIX = 'adjustment_not_booked:';

/**
 * The run's findings as the items they name: the day and the key (one id per item, see
 * settlement_items). A day's difference is explained by the open discrepancies of that day, and the
 * open discrepancies of the run's days are its findings: no other discrepancy is read.
 */
const FINDING_KEYS = `select business_date, 'T:' || transaction_id as key from found
    where transaction_id is not null and return_transaction_id is null
  union all select business_date, 'M:' || merchant_transaction_id from found where merchant_transaction_id is not null
  union all select business_date, 'R:' || return_transaction_id from found where return_transaction_id is not null
  union all select business_date, 'A:' || substr(discrepancy_key, ${ADJUSTMENT_PREFIX.length + 1}) from found
    where kind = 'adjustment_not_booked'`;

/**
 * The range's discrepancies: the run's findings, and in a run over changed keys those of the range
 * it did not look at (ctx.unseen, reconcile/incremental.ts), as a full run would find them.
 */
function found(ctx: RuleContext) {
  const columns = sql.raw(
    'business_date, transaction_id, merchant_transaction_id, return_transaction_id, kind, discrepancy_key',
  );
  if (ctx.unseen === undefined) return sql`select ${columns} from findings`;
  // Of the days the roll-forward computes again (scope_days) only: the others keep their discrepancy.
  const ofDays = sql`business_date = any (array(select business_date from scope_days))`;
  return sql`select ${columns} from findings where ${ofDays}
    union all select ${columns} from (${ctx.unseen}) u where ${ofDays}`;
}

const ROLL_FORWARD = 'settlement_roll_forward';

/**
 * A run over changed keys computes the roll-forward of scope_days (returns-scope.ts) and of the days
 * of the discrepancies it found or looked at, which explain their days' differences: those days are
 * added to scope_days, and their settlement_unexplained discrepancies to what the run looked at
 * (looked_at), so that the lifecycle resolves those the roll-forward no longer finds and no other.
 */
async function addDaysOfFindings(ctx: RuleContext): Promise<void> {
  await exec(
    ctx,
    sql`insert into scope_days (business_date)
      select business_date from findings
      union select d.business_date from discrepancies d
        where d.discrepancy_id = any (array(select discrepancy_id from looked_at))
          and d.business_date between ${ctx.from}::date and ${ctx.to}::date
      except select business_date from scope_days`,
  );
  await exec(
    ctx,
    sql`insert into looked_at (discrepancy_id)
      select d.discrepancy_id from discrepancies d
      where d.business_date = any (array(select business_date from scope_days)) and d.rule = ${ROLL_FORWARD}
      except select discrepancy_id from looked_at`,
  );
}

/**
 * A run over changed keys computes the days whose inputs changed (addDaysOfFindings) from the kept
 * items, which it brings up to date first and reads where they are, with the items the discrepancies
 * of those days name and those matched by hand (named): by key (keptDisputed, keptDays in
 * settlement-kept-keys.ts: the disputed pairs' items and the kept sums), or, without the key
 * indexes, every item of its days (its window a view of them, keptWindow; DISPUTED, DAYS). A full
 * run reads the items of the range's days of the run's account (the window) and the named items,
 * analyzed: the matches the view reads were written earlier in this run, so that only these tables'
 * real sizes keep the roll-forward's joins linear, and keeps them.
 * A full run over most of the history reads them from settlement_range_items (readsRangeItems),
 * which reads each ledger payment once where settlement_items reads the paired and the unpaired ones
 * apart, each a hash of the whole ledger, claims and provider tables (migration 0043); otherwise the
 * view is read for those dates only (an index scan in each of its branches). `offset 0` keeps the
 * account's condition out of it, where the planner could drive the branches from the account's
 * whole index instead of the dates'; inside it, each item's kept columns (KEPT_COLUMNS: its key among
 * them) are computed by the parallel workers below the Gather, not by the leader above it, which
 * receives and writes every item and so sets the window's wall (docs/benchmark-record.md §2). The
 * window (when not the kept items), the named items and the disputed pairs are the run's work
 * tables (work-tables.ts: read by parallel workers, dropped with the run's others); the days are
 * written by CREATE TABLE AS, which runs in parallel where an INSERT never does, and the rule reads
 * them (settlement_days).
 */
async function prepareRollForward(ctx: RuleContext): Promise<void> {
  let items = sql`public.settlement_items i where i.business_date between ${ctx.from}::date and ${ctx.to}::date`;
  let kept: KeptRead | false = false;
  let days: string[] = [];
  if (ctx.scoped) {
    await addDaysOfFindings(ctx);
    days = await scopeDays(ctx);
    kept = await rollKeptDays(ctx, days);
    if (kept === 'by day') await keptWindow(ctx, days);
    items = sql`public.settlement_items i where i.business_date = any (${days}::date[])`;
  } else {
    await analyzeStaleMatches(ctx);
    if (await readsRangeItems(ctx))
      items = sql`recon_work.settlement_range_items i
        where i.business_date between ${ctx.from}::date and ${ctx.to}::date`;
  }
  if (!kept)
    await createWorkTable(
      ctx,
      'settlement_window',
      sql`select * from (select ${sql.raw(KEPT_COLUMNS)} from ${items} offset 0) i
        where i.account = ${await runAccount(ctx)}`,
    );
  await createWorkTable(
    ctx,
    'settlement_named',
    sql`with found as (${found(ctx)}) select distinct business_date, key from (${sql.raw(FINDING_KEYS)}) k
      union all ${sql.raw(MANUAL_KEYS)}`,
  );
  await analyzeWorkTables(ctx, ...(kept ? [] : ['settlement_window' as const]), 'settlement_named');
  if (kept === 'by key') await keptDisputed(ctx, days);
  else await createWorkTable(ctx, 'settlement_disputed', sql.raw(DISPUTED));
  await analyzeWorkTables(ctx, 'settlement_disputed');
  if (kept === 'by key') await keptDays(ctx, days);
  else await exec(ctx, sql`create temp table settlement_days on commit drop as ${sql.raw(DAYS)}`);
  if (kept === 'by day') await exec(ctx, sql`drop view settlement_window`);
  if (!ctx.scoped && !ctx.dryRun) await keepWindow(ctx);
}

/**
 * The run's account, as a value: the window's condition on it is tested on every item, above the
 * Gather (the `offset 0` keeps it out of the view), by the leader that also writes them; a
 * current_setting() called per item cost 0.25-0.45 s of the window's 5.8-6.1 s of server CPU at
 * 1,000,000 rows (docs/benchmark-record.md §2).
 */
async function runAccount(ctx: RuleContext): Promise<string> {
  const r = await sql<{ a: string }>`select current_setting('recon.run_account') as a`.execute(ctx.trx);
  return r.rows[0]!.a;
}

/**
 * Whether a full run's window reads settlement_range_items (migration 0043): the same rows as
 * settlement_items with each ledger payment read once, about two thirds of the view's server CPU at
 * 1,000,000 rows (docs/benchmark-record.md §2), when two things hold:
 * - the range holds at least half of the history's account-days (rangeHoldsMostOfHistory, scope.ts):
 *   the one pass reads the whole ledger, claims and provider tables, where the view's branches read a
 *   short range of a long history by their indexes (reconcile-window-cost: 3 days of two years);
 * - the run's role sees the run's account: settlement_items asks it of each row
 *   (`sees_every_account(current_user) or account_visible(account, current_user)`, 0034), and the
 *   window keeps the run's account's rows only, for which it is this one question (asked inside the
 *   statement, an InitPlan, it kept the provider's items off the parallel workers).
 * Every branch then runs under one Gather (a Parallel Append) at the run's parallel_tuple_cost (0.01,
 * reconcile-range.ts): at the server's default 0.1 the provider's items were read in the leader alone.
 */
async function readsRangeItems(ctx: RuleContext): Promise<boolean> {
  if (!(await rangeHoldsMostOfHistory(ctx))) return false;
  const r = await sql<{ ok: boolean }>`select public.sees_every_account(current_user)
      or public.account_visible(current_setting('recon.run_account'), current_user) as ok`.execute(ctx.trx);
  return r.rows[0]!.ok;
}

/**
 * The view joins the claims: a first run of a range has just written most of them, in this
 * transaction, where autovacuum cannot count them. Planned with the statistics of an emptier table,
 * the view's paired ledger branch probes the ledger's index once per claim (1,000,000 probes in a
 * first run at 1,000,000 rows) where hash joins read each table once: the window's read took 2.5x
 * as long at 100,000 rows (docs/benchmark-record.md §2). The claims are analyzed when their
 * statistics count fewer rows than the run's facts (every row of the range): never for a window of
 * a larger history, whose statistics already count more and whose sample would read the history.
 */
async function analyzeStaleMatches(ctx: RuleContext): Promise<void> {
  const r = await sql<{ stale: boolean }>`select coalesce(
      (select reltuples from pg_class where oid = 'public.transaction_matches'::regclass)
        < (select reltuples from pg_class where oid = to_regclass(${workTable('facts')})), false) as stale`.execute(
    ctx.trx,
  );
  if (r.rows[0]!.stale) await exec(ctx, sql`analyze public.transaction_matches, public.return_matches`);
}

/**
 * The days a run over changed keys computes again, as values: the planner sizes the view's branches
 * by them (a day or a few), where `= any (array(select ...))` left it a guess, and it hashed the
 * whole claims and provider tables to read one day (0.84 s of a 1.87 s re-run after one change at
 * 1,000,000 rows; docs/benchmark-record.md §1).
 */
async function scopeDays(ctx: RuleContext): Promise<string[]> {
  const r = await sql<{ day: string }>`select business_date::text as day from scope_days order by 1`.execute(
    ctx.trx,
  );
  return r.rows.map((x) => x.day);
}

/**
 * The items a person matched by hand in a match that holds (manual-matches.ts), by their keys
 * (an item's item_key: a provider row's is its transaction id, a ledger entry's its merchant transaction id),
 * on no day: they dispute their pairs on every day, as the discrepancies that match closed did.
 */
const MANUAL_KEYS = `select null::date, 'T:' || item_id from ${manuallyMatchedIds('provider')} mp
  union all select null::date, 'M:' || item_id from ${manuallyMatchedIds('ledger')} ml`;

/**
 * The pairs of the window that are disputed: an open discrepancy of the day names one of its items
 * (settlement_named, by day), a person matched one (settlement_named, on no day), or one is in
 * flight. The item's key looked up in two hashed sets (hashed SubPlans each parallel worker builds:
 * by day and key, and by key for those on no day), never a subquery per item: the manual matches as
 * two more hashed joins, by the transaction and the merchant transaction id, cost a fifth of the
 * statement even when there were none (1.20 s against 0.92-1.03 s of server CPU over 1,828,667
 * items, docs/benchmark-record.md §2); an item has one of the four ids (settlement_items), so its
 * key finds the same rows. A left join with the named items made a joined row of every item to test
 * it: 0.73-0.88 s against 0.83-0.95 s (docs/benchmark-record.md §2). A table of its own: joined as
 * a subquery below, each parallel worker computed it again, reading the whole window once each.
 */
const DISPUTED = `select distinct i.business_date, i.pair_key from settlement_window i
  where i.in_flight
    or (i.business_date, i.item_key) in (select business_date, key from settlement_named where business_date is not null)
    or i.item_key in (select key from settlement_named where business_date is null)`;

/**
 * The range's days: both nets, the difference, the part explained, the remainder. The disputed pairs
 * are few, found first and looked up by key, so that the items are summed in one hashed pass (a window
 * over every pair sorted the whole range's items: 20.5 s of a first run at 1,000,000 rows). Three
 * sums: the difference is the provider's net less the ledger's and the remainder the difference less
 * the part explained, the same integers as summing each (five sums: 1.25 s against 1.11 s of server
 * CPU over 1,828,667 items, docs/benchmark-record.md §2). The part explained sums the items whose
 * pair is in the hashed set of disputed pairs (a hashed SubPlan each parallel worker builds), not a
 * left join with it: the join node made a joined row of every item only to test one column of it
 * (0.83-1.13 s against 1.06-1.59 s of server CPU over 1,828,667 items, docs/benchmark-record.md
 * §2). The disputed pairs are distinct, so an item is in the set at most once, as it matched at
 * most one row of the join.
 */
const DAYS = `
  select business_date, currency, provider_net, ledger_net, provider_net - ledger_net as difference, explained,
    provider_net - ledger_net - explained as unexplained, items
  from (select i.business_date, i.currency, ${ITEM_SUMS},
      coalesce(sum(${SIGNED}) filter (where (i.business_date, i.pair_key) in (select business_date, pair_key from settlement_disputed)), 0)::bigint as explained
    from settlement_window i
    group by i.business_date, i.currency) s`;

/** settlement_unexplained: a day whose provider and ledger nets differ by more than its open discrepancies explain. */
export const settlementUnexplained: Rule = {
  name: 'settlement_unexplained',
  rule: ROLL_FORWARD,
  kinds: ['settlement_unexplained'],
  prepare: prepareRollForward,
  reads: { from: () => 'settlement_days s', anchor: 'day' },
  // The date lag of the currency's tolerance lengthens the grace period of missing_at_provider and
  // return_not_booked, whose money is part of the day's: the day waits as long.
  when: (ctx) => sql`s.unexplained <> 0 and s.business_date <= ${toSql(dueThroughFor(ctx, 's.currency'))}`,
  select: () => ({
    discrepancy_key: `'settlement_unexplained:' || s.business_date || ':' || s.currency`,
    business_date: 's.business_date',
    currency: 's.currency',
    expected: `jsonb_build_object('provider_net_cents', s.provider_net, 'ledger_net_cents', s.ledger_net,
      'difference_cents', s.difference, 'explained_cents', s.explained)`,
    actual: `jsonb_build_object('unexplained_cents', s.unexplained)`,
    difference_cents: 's.unexplained',
    candidates: `jsonb_build_object('settlement', jsonb_build_array(s.business_date || ':' || s.currency))`,
  }),
};

export const SETTLEMENT_RULES: readonly Rule[] = [settlementUnexplained];
