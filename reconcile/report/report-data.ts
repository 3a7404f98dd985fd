import { beginAccountScope, endAccountScope } from '../account-scope.ts';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { listDiscrepancies, reportSums, type ReportSums } from '../discrepancies/read.ts';
import { worklistCompare } from '../discrepancies/order.ts';
import type { DiscrepancyRow } from '../discrepancies/row.ts';

export type { DiscrepancyRow } from '../discrepancies/row.ts';

/**
 * Everything the text, JSON, HTML and CSV reports show for a range of Eastern business dates. Every
 * amount is in integer cents of the `currency` beside it: nothing is added across currencies.
 */
export interface ReportData {
  readonly from: string;
  readonly to: string;
  /** Which dates of the range a committed reconcile run has checked. */
  readonly coverage: ReportCoverage;
  /** Unresolved discrepancies per currency: how many and the money they concern. */
  readonly totals: ReportSums['totals'];
  /** Unresolved discrepancies per provider account and currency (one account when scoped to one). */
  readonly byAccount: ReportSums['byAccount'];
  /**
   * Successful provider transactions per day, type and currency. `type` is null for transactions whose
   * type code the provider sent is neither DEBIT nor CREDIT (their raw codes: {@link unknownTypeCodes}).
   */
  readonly volumes: {
    day: string;
    type: string | null;
    currency: string;
    count: number;
    amount_cents: number;
  }[];
  /** The raw type codes of the range's successful transactions of unknown type (sorted, distinct). */
  readonly unknownTypeCodes: string[];
  /** Unresolved discrepancies by kind and currency. */
  readonly byKind: ReportSums['byKind'];
  /** Unresolved discrepancies per day, kind and currency. */
  readonly byDay: ReportSums['byDay'];
  /** Returns of the range by return code and currency. */
  readonly returnsByCode: { code: string; currency: string; count: number; amount_cents: number }[];
  /** Every discrepancy of the range (resolved ones included), for the CSV export and the detail table. */
  readonly discrepancies: DiscrepancyRow[];
  /** The open items with the most money at stake, per currency (see {@link largestOpen}). */
  readonly largestOpen: DiscrepancyRow[];
  /** The open items of the earliest business dates (see {@link oldestOpen}). */
  readonly oldestOpen: DiscrepancyRow[];
}

/** How many items the largest and oldest lists hold (per currency for the largest). */
export const TOP_ITEMS = 10;

/** Dates of a report's range that no committed reconcile run covers, as runs of consecutive dates. */
export interface ReportCoverage {
  /** Dates in the range. */
  readonly days: number;
  /** Dates that at least one committed reconcile run covered. */
  readonly checkedDays: number;
  /** Dates no run covered, consecutive dates compressed into one range (from = to for a single date). */
  readonly unchecked: { from: string; to: string }[];
  /** When the latest run covering a date of the range committed (UTC), null when none did. */
  readonly lastRunAt: string | null;
}

/** Unresolved (open or acknowledged) items. */
function unresolved(rows: readonly DiscrepancyRow[]): DiscrepancyRow[] {
  return rows.filter((r) => r.resolved_at === null);
}

/** The worklist order of the workbench (reconcile/discrepancies/order.ts). */
export const byStakeThenAge = worklistCompare;

/** The `limit` unresolved items with the most money at stake in each currency, in worklist order. */
export function largestOpen(rows: readonly DiscrepancyRow[], limit = TOP_ITEMS): DiscrepancyRow[] {
  const sorted = unresolved(rows).sort(byStakeThenAge);
  const seen = new Map<string | null, number>();
  return sorted.filter((r) => {
    const n = seen.get(r.currency) ?? 0;
    seen.set(r.currency, n + 1);
    return n < limit;
  });
}

/** The `limit` unresolved items of the earliest business dates (then the most money at stake). */
export function oldestOpen(rows: readonly DiscrepancyRow[], limit = TOP_ITEMS): DiscrepancyRow[] {
  return unresolved(rows)
    .sort(
      (a, b) =>
        (a.business_date ?? '').localeCompare(b.business_date ?? '') ||
        a.first_seen_at.localeCompare(b.first_seen_at) ||
        b.stake_cents - a.stake_cents ||
        a.discrepancy_id - b.discrepancy_id,
    )
    .slice(0, limit);
}

/** Consecutive dates (sorted YYYY-MM-DD) as ranges: 01, 02, 03, 05 → 01..03 and 05..05. */
export function dateRuns(dates: readonly string[]): { from: string; to: string }[] {
  const runs: { from: string; to: string }[] = [];
  for (const date of dates) {
    const last = runs.at(-1);
    if (last && addDays(last.to, 1) === date) last.to = date;
    else runs.push({ from: date, to: date });
  }
  return runs;
}

/** The dates of from..to that no committed reconcile run covers, and when the last covering run committed. */
export async function loadCoverage(
  db: Kysely<Database>,
  range: { from: string; to: string },
): Promise<ReportCoverage> {
  const { from, to } = range;
  // A run's row exists only once it committed (the run is one transaction); finished_at says so.
  const rows = await sql<{ day: string; checked: boolean }>`
    select d::date::text as day, exists (
        select from reconcile_runs r
        where r.finished_at is not null and d::date between r.range_from and r.range_to) as checked
    from generate_series(${from}::date, ${to}::date, interval '1 day') d
    order by 1`.execute(db);
  const last = await sql<{ at: string | null }>`
    select max(finished_at)::text as at from reconcile_runs
    where finished_at is not null and range_from <= ${to}::date and range_to >= ${from}::date`.execute(db);
  return {
    days: rows.rows.length,
    checkedDays: rows.rows.filter((r) => r.checked).length,
    unchecked: dateRuns(rows.rows.filter((r) => !r.checked).map((r) => r.day)),
    lastRunAt: last.rows[0]?.at ?? null,
  };
}

/**
 * The report of from..to: of one provider account when `account` is given (every query of the report
 * then sees that account's rows only: reconcile/account-scope.ts), else of every account.
 */
export async function loadReportData(
  db: Kysely<Database>,
  range: { from: string; to: string },
  account?: string,
): Promise<ReportData> {
  if (account === undefined) return reportOf(db, range);
  return db.transaction().execute(async (trx) => {
    await beginAccountScope(trx, account);
    const data = await reportOf(trx, range);
    await endAccountScope(trx);
    return data;
  });
}

async function reportOf(db: Kysely<Database>, range: { from: string; to: string }): Promise<ReportData> {
  const { from, to } = range;
  const coverage = await loadCoverage(db, range);
  const volumes = await sql<ReportData['volumes'][number]>`
    select transaction_on::text as day, transaction_type as type, currency::text as currency,
      count(*)::int as count, sum(amount_cents)::bigint as amount_cents
    from provider_transactions where transaction_on between ${from}::date and ${to}::date and status = 'SUCCESSFUL'
    group by 1, 2, 3 order by 1, 2 nulls last, 3`.execute(db);
  const unknownTypes = await sql<{ code: string }>`
    select distinct raw_transaction_type as code from provider_transactions
    where transaction_on between ${from}::date and ${to}::date and status = 'SUCCESSFUL'
      and transaction_type is null
    order by 1`.execute(db);
  const sums = await reportSums(db, { status: 'unresolved', from, to });
  const returnsByCode = await sql<ReportData['returnsByCode'][number]>`
    select coalesce(return_code, '(none)') as code, currency::text as currency, count(*)::int as count,
      sum(amount_cents)::bigint as amount_cents
    from provider_returns where returned_on between ${from}::date and ${to}::date
    group by 1, 2 order by sum(count(*)) over (partition by coalesce(return_code, '(none)')) desc, 1, 2`.execute(
    db,
  );
  const rows = await listDiscrepancies(db, { from, to }, { order: 'date' });
  return {
    from,
    to,
    coverage,
    ...sums,
    volumes: volumes.rows,
    returnsByCode: returnsByCode.rows,
    unknownTypeCodes: unknownTypes.rows.map((r) => r.code),
    discrepancies: rows,
    largestOpen: largestOpen(rows),
    oldestOpen: oldestOpen(rows),
  };
}
