import { checkDateWindow } from '../domain/time/date-window.ts';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { easternDateOf } from '../domain/time/eastern.ts';
import { addDays, daysInclusive } from '../domain/time/calendar.ts';
import { beginAccountScope, endAccountScope } from './account-scope.ts';
import { applyFindings } from './apply-findings.ts';
import { findChangedCandidates } from './candidates/changed-candidates.ts';
import { findCandidates } from './candidates/find-candidates.ts';
import { queryOn } from '../db/database-on-client.ts';
import { markAbandonedLoads } from '../db/load-owner.ts';
import { addBusinessDays, type CalendarOptions } from '../domain/time/business-days.ts';
import {
  countedUnfound,
  finishMatching,
  stateKeptFrom,
  type FullBecause,
  matchChanges,
  type MatchingScope,
  scopeCondition,
} from './incremental.ts';
import { RULES } from './rules/run-rules.ts';
import { dropSeenChanges } from './seen-changes.ts';
import type { Rule } from './rules/rule.ts';
import { accountHoldsAny, type RuleContext } from './rules/statement.ts';
import { type ReconcileSettings, resolveSettings } from './settings.ts';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import { DEFAULT_FOLLOW_UP } from '../config/follow-up.ts';
import { runTolerances, type Tolerances, writeOffFindings } from './tolerances/index.ts';
import type { DiscrepancyTotal, ReconcileOutcome } from '../domain/run-summary.ts';

export interface ReconcileRequest {
  /** The provider account to reconcile; 'default' when not given. Runs of different accounts never meet. */
  readonly account?: string;
  /** First Eastern business date, YYYY-MM-DD (inclusive). */
  readonly from: string;
  /** Last Eastern business date, YYYY-MM-DD (inclusive). */
  readonly to: string;
  /** The instant grace periods are judged against and events are stamped with (ISO); default now. */
  readonly now?: string;
  readonly settings?: Partial<ReconcileSettings>;
  /** Tolerances to match with instead of the account's (a proposal being previewed, a test). */
  readonly tolerances?: Tolerances;
  /**
   * Called with the run's `findings`, before the lifecycle touches a discrepancy: a preview reads
   * them there and throws to roll the whole run back (reconcile/tolerances/preview.ts). Such a run is
   * a dry run (RuleContext.dryRun): it does not write the claims, and it fails if this returns.
   */
  readonly beforeLifecycle?: (ctx: RuleContext) => Promise<void>;
  /**
   * Match every row of the range even when only some keys changed since its dates were last matched
   * (`recon reconcile --full`): the reference a run over changed keys must agree with.
   */
  readonly full?: boolean;
  /**
   * RECON_FOLLOW_UP_DAYS (default 120): how far back the follow-up of non-final transactions
   * reconciles days again; the dates' matching state is kept that long (reconcile/incremental.ts).
   */
  readonly followUpDays?: number;
}

export type { DiscrepancyTotal };

/** The run's summary: its outcome (what crosses to the workflows, typed) and the run's own details. */
export interface ReconcileSummary extends ReconcileOutcome {
  readonly account: string;
  readonly from: string;
  readonly to: string;
  readonly asOf: string;
  readonly settings: ReconcileSettings;
  /** The version of the account's tolerances the run used (0: none, exact matching). */
  readonly toleranceVersion: number;
  /** Differences the run wrote off (within the write-off limit), and earlier ones it reopened. */
  /** fixed: a run's write-off no longer found (the difference gone), reversed and resolved as fixed. */
  readonly writeOffs: { readonly writtenOff: number; readonly reopened: number; readonly fixed: number };
  /**
   * `reused` when nothing matching reads had been written since the last run of this exact range with
   * the same code, settings and due date: its findings were taken instead of matching again
   * (reconcile/matching-reuse.ts). The lifecycle ran either way.
   */
  readonly matching: 'matched' | 'reused';
  /**
   * `full`: every row of the range was matched (`fullBecause` says why); `incremental`: only the rows
   * the keys written since the range's dates were last matched reach (reconcile/incremental.ts), and
   * `matched` counts those; `reused`: see `matching`.
   */
  readonly scope: MatchingScope['scope'];
  readonly fullBecause?: FullBecause;
  /** Of a run over changed keys: how many keys (transaction, merchant transaction and return ids) it started from. */
  readonly changedKeys?: number;
  /** Sorted by kind, then currency; never added across currencies. */
  readonly discrepancies: readonly DiscrepancyTotal[];
  readonly durationMs: number;
  /** The range as asked, when it was wider than the data and was clamped to from..to. */
  readonly requested?: { readonly from: string; readonly to: string };
}

/**
 * The money a discrepancy is about, in its own currency: for a disagreement on the amount (or fee)
 * the difference; for a currency, type or status disagreement, or a missing item, the whole amount.
 * Summed only within one currency.
 */
export const DISCREPANCY_CENTS = sql<number>`case when kind in ('currency_mismatch','type_mismatch','status_mismatch')
    then abs(coalesce(expected_amount_cents, actual_amount_cents, 0))
    else abs(coalesce(difference_cents, expected_amount_cents, actual_amount_cents, 0)) end`;

/**
 * Serialises runs: matching reads and claims rows outside its own range, so overlapping runs queue.
 * A table of the pipeline's private schema, which no analyst role can reach: an advisory lock could be
 * taken by any session, and an analyst holding it would stall every run.
 */
const LOCK_STATEMENT = 'lock table recon_work.reconcile_lock in exclusive mode';
/** A range longer than this is clamped to the dates that hold data (0001-01-01..9999-12-31 is not meant). */
const CLAMP_AFTER_DAYS = 366;

/**
 * Matches provider transactions, returns, notifications and legacy rows of the Eastern business
 * dates from..to against the ledger and each other, and brings the discrepancies of that range up to
 * date (opened, changed, reopened, resolved; every change in discrepancy_events).
 *
 * Idempotent: a second run over the same data changes nothing but last_seen_at. Safe to run
 * concurrently for overlapping ranges: each run locks recon_work.reconcile_lock for its transaction,
 * so runs queue instead of interleaving; one transaction means a failed run leaves the previous
 * state intact.
 * Throws InvalidDateWindow for a malformed range; database errors propagate (retrying is safe).
 * `rules` are the matching rules to run (reconcile/rules/run-rules.ts; tests add their own).
 */
export async function reconcileRange(
  db: Kysely<Database>,
  req: ReconcileRequest,
  rules: readonly Rule[] = RULES,
): Promise<ReconcileSummary> {
  const started = performance.now();
  checkDateWindow(
    req.from,
    req.to,
    () => `reconcile range ${req.from}..${req.to}: give two YYYY-MM-DD dates, from <= to`,
  );
  const settings = resolveSettings(req.settings);
  const asOf = req.now ?? new Date().toISOString();
  const today = easternDateOf(asOf);
  const calendar = { civicHoliday: settings.civicHoliday };
  const dueThrough = lastDueDate(req.to, today, settings.graceBusinessDays, calendar);
  const stuckThrough = lastDueDate(req.to, today, settings.stuckPendingBusinessDays, calendar);
  // Loads left running by a process or a server that died are marked before anyone reads them.
  await markAbandonedLoads(queryOn(db));
  const { from, to } = await clampToData(db, req.from, req.to);
  const requested = from !== req.from || to !== req.to ? { from: req.from, to: req.to } : undefined;

  const account = req.account ?? DEFAULT_ACCOUNT;
  return db.transaction().execute(async (trx) => {
    await sql.raw(LOCK_STATEMENT).execute(trx);
    await beginAccountScope(trx, account);
    await tuneForMatching(trx);
    const tolerances = await runTolerances(
      trx,
      account,
      (lag) =>
        lag === 0 ? dueThrough : lastDueDate(req.to, today, settings.graceBusinessDays + lag, calendar),
      req.tolerances,
    );
    const run = await recordRun(trx, { account, from, to, asOf, settings: { ...settings, tolerances } });
    const ctx: RuleContext = {
      trx,
      from,
      to,
      asOf,
      runId: run.run_id,
      settings,
      dueThrough,
      stuckThrough,
      tolerances,
      // A preview reads the whole range's findings before the lifecycle, then rolls the run back.
      ...(req.beforeLifecycle ? { dryRun: true } : {}),
    };

    // A preview matches in full.
    const full = (req.full ?? false) || req.beforeLifecycle !== undefined;
    const { matched, how, snapshot } = await matchChanges(ctx, account, rules, full);
    await req.beforeLifecycle?.(ctx);
    // A dry run left the claims unwritten: it must never commit.
    if (ctx.dryRun) throw new Error('a preview run must throw in beforeLifecycle to roll itself back');
    const inScope = how.scope === 'incremental' ? { inScope: scopeCondition() } : {};
    // The account holds no discrepancy yet (its first run): the lifecycle, the write-offs and the
    // unfound resolutions leave out the statements that cannot find anything (apply-findings.ts).
    const first = !(await accountHoldsAny(trx, 'discrepancies', 'discrepancy_key'));
    const looked = { from, to, asOf, runId: run.run_id, first, ...inScope };
    const lifecycle = await applyFindings(trx, looked);
    const writeOffs = await writeOffFindings(trx, { ...looked, account, tolerances });
    const keptFrom = stateKeptFrom(today, req.followUpDays ?? DEFAULT_FOLLOW_UP.days);
    await finishMatching(ctx, account, rules, how, snapshot, keptFrom, first);
    await (how.scope === 'incremental' ? findChangedCandidates(ctx) : findCandidates(ctx));
    const byKind = await runTotals(ctx, how);
    const summary = {
      account,
      runId: run.run_id,
      from,
      to,
      asOf,
      settings,
      toleranceVersion: tolerances.version,
      writeOffs,
      matched,
      matching: how.scope === 'reused' ? ('reused' as const) : ('matched' as const),
      scope: how.scope,
      ...(how.scope === 'full' ? { fullBecause: how.because } : {}),
      ...(how.scope === 'incremental' ? { changedKeys: how.changedKeys } : {}),
      discrepancies: byKind,
      totalDiscrepancies: byKind.reduce((n, r) => n + r.count, 0),
      lifecycle,
      durationMs: Math.round(performance.now() - started),
      ...(requested ? { requested } : {}),
    };
    await trx
      .updateTable('reconcile_runs')
      .set({ summary: JSON.stringify(summary), finished_at: sql<string>`clock_timestamp()` })
      .where('run_id', '=', run.run_id)
      .execute();
    // Last, so that a change log truncated stays locked only until the commit.
    if (how.scope !== 'reused') await dropSeenChanges(trx);
    await endAccountScope(trx);
    return summary;
  });
}

/**
 * The run's totals per kind and currency: its findings, and for a run over changed keys the range's
 * discrepancies it did not look at (countedUnfound, reconcile/incremental.ts).
 */
async function runTotals(ctx: RuleContext, how: MatchingScope): Promise<DiscrepancyTotal[]> {
  const unfound = how.scope === 'incremental' ? countedUnfound(ctx) : sql`false`;
  const byKind = await sql<DiscrepancyTotal>`
    select kind, currency::text as currency, sum(n)::int as count, sum(cents)::bigint as amount_cents from (
      select kind, currency, count(*) as n, coalesce(sum(${DISCREPANCY_CENTS}), 0) as cents
      from findings group by kind, currency
      union all select kind, currency, count(*), coalesce(sum(${DISCREPANCY_CENTS}), 0)
      from discrepancies d where ${unfound} group by kind, currency) t
    group by kind, currency order by kind, currency nulls last`.execute(ctx.trx);
  return byKind.rows;
}

/** The run's row; the tolerances' version and values as used: reconcile_runs records what each run matched with. */
function recordRun(
  trx: Transaction<Database>,
  r: { account: string; from: string; to: string; asOf: string; settings: object },
): Promise<{ run_id: number }> {
  return trx
    .insertInto('reconcile_runs')
    .values({
      account: r.account,
      range_from: r.from,
      range_to: r.to,
      as_of: r.asOf,
      settings: JSON.stringify(r.settings),
    })
    .returning('run_id')
    .executeTakeFirstOrThrow();
}

/** The planner settings of a run's transaction (why each: below). */
async function tuneForMatching(trx: Transaction<Database>): Promise<void> {
  // Matching works on many rows at once: give the planner room for hash joins and sorts.
  await sql`set local work_mem = '256MB'`.execute(trx);
  // JIT compiling these one-off statements costs more than it saves (seconds per statement at 1M rows).
  await sql`set local jit = off`.execute(trx);
  // A run over a few days looks a few thousand keys up in tables of millions of rows: on a warehouse
  // whose indexes are in memory or on SSD, an index probe is not 4 sequential reads (the default
  // cost), and with that default the planner hashed whole tables (the matches, every discrepancy)
  // to find a window's rows, so that a run's cost grew with the warehouse instead of its range.
  await sql`set local random_page_cost = 1.1`.execute(trx);
  // The big set-building statements (facts, the latest notifications, the duplicate search) read
  // about as many rows as they hand on: at the default cost of passing a row from a parallel worker
  // (0.1) the planner never splits them over the cores. Small statements stay serial: the cost of
  // starting workers (parallel_setup_cost) is unchanged.
  await sql`set local parallel_tuple_cost = 0.01`.execute(trx);
  // The run's temporary tables are analysed for join planning only: a small sample is enough.
  await sql`set local default_statistics_target = 10`.execute(trx);
}

/**
 * Reconciles from..to for `req.account`, or, without it, for every account the warehouse holds data
 * of (loads, discrepancies), one run each, in name order.
 */
export async function reconcileAccounts(
  db: Kysely<Database>,
  req: ReconcileRequest,
): Promise<ReconcileSummary[]> {
  if (req.account !== undefined) return [await reconcileRange(db, req)];
  const r = await sql<{ account: string }>`
    select account from loads union select account from discrepancies order by 1`.execute(db);
  const accounts = r.rows.length > 0 ? r.rows.map((x) => x.account) : [DEFAULT_ACCOUNT];
  const out: ReconcileSummary[] = [];
  for (const account of accounts) out.push(await reconcileRange(db, { ...req, account }));
  return out;
}

/**
 * The last date whose grace period has run out at `today`: `graceDays` business days after it is
 * `today` or earlier. Every earlier date is due as well, so this one date stands for the whole list.
 */
export function lastDueDate(to: string, today: string, graceDays: number, calendar: CalendarOptions): string {
  if (graceDays === 0) return to;
  let d = to < today ? to : today;
  while (addBusinessDays(d, graceDays, calendar) > today) d = addDays(d, -1);
  return d;
}

/**
 * A range longer than a year is narrowed to the first and last dates that hold data of any kind the
 * run reads or resolves (provider rows, ledger bookings, discrepancies); a range without any data
 * becomes its first date. Shorter ranges are kept as asked, so that reconcile_runs records them.
 */
async function clampToData(
  db: Kysely<Database>,
  from: string,
  to: string,
): Promise<{ from: string; to: string }> {
  if (daysInclusive(from, to) <= CLAMP_AFTER_DAYS) return { from, to };
  const r = await sql<{ first: string | null; last: string | null }>`
    with d(first, last) as (
      select min(transaction_on), max(transaction_on) from provider_transaction_days
      union all select min(returned_on), max(returned_on) from provider_returns
      union all select min(transaction_on), max(transaction_on) from legacy_transactions
      union all select (min(booked_at) at time zone 'America/Toronto')::date,
                       (max(booked_at) at time zone 'America/Toronto')::date from merchant_ledger
      union all select min(business_date), max(business_date) from discrepancies)
    select min(first)::text as first, max(last)::text as last from d
    where first <= ${to}::date and last >= ${from}::date`.execute(db);
  const row = r.rows[0];
  if (!row?.first || !row.last) return { from, to: from };
  return { from: row.first > from ? row.first : from, to: row.last < to ? row.last : to };
}
