import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { easternDateOf } from '../lib/time/eastern.ts';
import { isoDate } from '../lib/time/calendar.ts';
import { applyFindings, type LifecycleCounts } from './apply-findings.ts';
import { businessDaysBetween, datesBetween } from './business-days.ts';
import {
  matchTransactions,
  notificationFindings,
  prepareScope,
  returnFindings,
  type RuleContext,
  sourceFindings,
  transactionFindings,
} from './match-rules.ts';
import { type ReconcileSettings, resolveSettings } from './settings.ts';

export interface ReconcileRequest {
  /** First Eastern business date, YYYY-MM-DD (inclusive). */
  readonly from: string;
  /** Last Eastern business date, YYYY-MM-DD (inclusive). */
  readonly to: string;
  /** The instant grace periods are judged against and events are stamped with (ISO); default now. */
  readonly now?: string;
  readonly settings?: Partial<ReconcileSettings>;
}

/** Discrepancies of one kind in one currency: how many, and the money they concern in that currency. */
export interface DiscrepancyTotal {
  readonly kind: string;
  /** ISO 4217 code; null for a discrepancy recorded without a currency. */
  readonly currency: string | null;
  readonly count: number;
  /** See DISCREPANCY_CENTS: the difference, or the whole amount of a missing or disputed item. */
  readonly amount_cents: number;
}

export interface ReconcileSummary {
  readonly runId: number;
  readonly from: string;
  readonly to: string;
  readonly asOf: string;
  readonly settings: ReconcileSettings;
  readonly matched: {
    readonly transactions: number;
    readonly returns: number;
    readonly notifications: number;
    readonly legacy: number;
  };
  /**
   * Discrepancies that hold for the range after this run, by kind and currency: how many and the
   * money they concern (never added across currencies). Sorted by kind, then currency.
   */
  readonly discrepancies: readonly DiscrepancyTotal[];
  readonly totalDiscrepancies: number;
  readonly lifecycle: LifecycleCounts;
  readonly durationMs: number;
}

/**
 * The money a discrepancy is about, in its own currency: for a disagreement on the amount (or fee)
 * the difference; for a currency, type or status disagreement, or a missing item, the whole amount.
 * Summed only within one currency.
 */
export const DISCREPANCY_CENTS = sql<number>`case when kind in ('currency_mismatch','type_mismatch','status_mismatch')
    then abs(coalesce(expected_amount_cents, actual_amount_cents, 0))
    else abs(coalesce(difference_cents, expected_amount_cents, actual_amount_cents, 0)) end`;

/** Serialises runs: matching reads and claims rows outside its own range, so overlapping runs queue. */
const LOCK_KEY = 0x1b7_5ec0;

/**
 * Matches provider transactions, returns, notifications and legacy rows of the Eastern business
 * dates from..to against the ledger and each other, and brings the discrepancies of that range up to
 * date (opened, changed, reopened, resolved; every change in discrepancy_events).
 *
 * Idempotent: a second run over the same data changes nothing but last_seen_at. Safe to run
 * concurrently for overlapping ranges: each run holds a transaction-scoped advisory lock, so runs
 * queue instead of interleaving; one transaction means a failed run leaves the previous state intact
 * (the match tables are unlogged derived data: after a server crash the next run rebuilds them).
 * Throws RangeError for a malformed range; database errors propagate (retrying is safe).
 */
export async function reconcileRange(db: Kysely<Database>, req: ReconcileRequest): Promise<ReconcileSummary> {
  const started = performance.now();
  if (!isValidDate(req.from) || !isValidDate(req.to) || req.to < req.from) {
    throw new RangeError(`reconcile range ${req.from}..${req.to}: give two YYYY-MM-DD dates, from <= to`);
  }
  const settings = resolveSettings(req.settings);
  const asOf = req.now ?? new Date().toISOString();
  const today = easternDateOf(asOf);
  const calendar = { civicHoliday: settings.civicHoliday };
  const dueDates = datesBetween(req.from, req.to).filter(
    (d) => businessDaysBetween(d, today, calendar) >= settings.graceBusinessDays,
  );

  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${LOCK_KEY})`.execute(trx);
    // Matching works on many rows at once: give the planner room for hash joins and sorts.
    await sql`set local work_mem = '256MB'`.execute(trx);
    // JIT compiling these one-off statements costs more than it saves (seconds per statement at 1M rows).
    await sql`set local jit = off`.execute(trx);
    // The run's temporary tables are analysed for join planning only: a small sample is enough.
    await sql`set local default_statistics_target = 10`.execute(trx);
    const run = await trx
      .insertInto('reconcile_runs')
      .values({
        range_from: req.from,
        range_to: req.to,
        as_of: asOf,
        settings: JSON.stringify(settings),
      })
      .returning('run_id')
      .executeTakeFirstOrThrow();
    const ctx: RuleContext = { trx, from: req.from, to: req.to, asOf, runId: run.run_id, settings, dueDates };

    await prepareScope(ctx);
    const claims = await matchTransactions(ctx);
    await transactionFindings(ctx);
    await notificationFindings(ctx);
    const returns = await returnFindings(ctx);
    await sourceFindings(ctx);
    const lifecycle = await applyFindings(trx, { from: req.from, to: req.to, asOf, runId: run.run_id });

    const byKind = await sql<DiscrepancyTotal>`
      select kind, currency::text as currency, count(*)::int as count,
        coalesce(sum(${DISCREPANCY_CENTS}), 0)::bigint as amount_cents
      from findings group by kind, currency order by kind, currency nulls last`.execute(trx);
    const summary = {
      runId: run.run_id,
      from: req.from,
      to: req.to,
      asOf,
      settings,
      matched: { ...claims, returns },
      discrepancies: byKind.rows,
      totalDiscrepancies: byKind.rows.reduce((n, r) => n + r.count, 0),
      lifecycle,
      durationMs: Math.round(performance.now() - started),
    };
    await trx
      .updateTable('reconcile_runs')
      .set({ summary: JSON.stringify(summary), finished_at: sql<string>`clock_timestamp()` })
      .where('run_id', '=', run.run_id)
      .execute();
    return summary;
  });
}

function isValidDate(date: string): boolean {
  try {
    isoDate(date);
    return true;
  } catch {
    return false;
  }
}
