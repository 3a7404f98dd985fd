/**
 * Runs, loads and coverage: which Eastern days each source was loaded for, by which load and when,
 * what failed, which reconcile runs cover each day, and which business days lack a source.
 */
import { sql, type RawBuilder } from 'kysely';
import type { AccountScope } from '../../reconcile/discrepancies/filter.ts';
import type { Db } from '../../db/database.ts';
import { isBusinessDay } from '../../domain/time/business-days.ts';
import { datesBetween } from '../../domain/time/calendar.ts';
import { openFlags } from '../../reconcile/volume/flag-low-volume.ts';

/** The rows of `alias` (a table with an `account` column) that the scope may see. */
function inScope(alias: string, accounts: AccountScope): RawBuilder<boolean> {
  if (accounts === 'all') return sql<boolean>`true`;
  return sql<boolean>`${sql.ref(`${alias}.account`)} = any(${[...accounts]}::text[])`;
}

export async function listRuns(db: Db, page: { limit: number; before?: number }, accounts: AccountScope) {
  const rows = await sql<
    Record<string, unknown>
  >`select run_id, account, range_from, range_to, as_of, summary, started_at,
      finished_at from reconcile_runs r where ${inScope('r', accounts)}
    ${page.before ? sql`and run_id < ${page.before}::bigint` : sql``}
    order by run_id desc limit ${page.limit}`.execute(db);
  return rows.rows;
}

export async function listLoads(db: Db, page: { limit: number; before?: number }, accounts: AccountScope) {
  const rows = await sql<
    Record<string, unknown>
  >`select load_id, account, source, environment, origin, format, query_type,
      file_name, window_start, window_end, status, rows_read, rows_loaded, rows_rejected, rows_inserted,
      rows_updated, rows_unchanged, error, workflow_id, started_at, finished_at from loads l
    where ${inScope('l', accounts)} ${page.before ? sql`and load_id < ${page.before}::bigint` : sql``}
    order by load_id desc limit ${page.limit}`.execute(db);
  return rows.rows;
}

export interface CoverageLoad {
  load_id: number;
  status: string;
  started_at: string;
  finished_at: string | null;
  rows_loaded: number;
}

export interface CoverageDay {
  date: string;
  business_day: boolean;
  sources: Record<string, CoverageLoad[]>;
  /** Sources with no committed load for this business day (only sources the warehouse loads at all). */
  missing: string[];
  /** Sources with a failed load and no committed one for this day. */
  failed: string[];
  runs: number[];
  /**
   * Sources of an account that held nothing or far less than usual on this business day, with the
   * usual figure they were compared with (volume_flags; docs/operations.md "Low-volume days").
   */
  low_volume: { account: string; source: string; rows: number; usual_rows: number; baseline_days: number }[];
}

/** Coverage of Eastern days `from`..`to` within the scope: loads per source by their windows, reconcile runs, low-volume flags. */
export async function coverage(
  db: Db,
  from: string,
  to: string,
  accounts: AccountScope,
): Promise<{ sources: string[]; days: CoverageDay[] }> {
  const [loads, runs, sources] = await Promise.all([
    sql<
      CoverageLoad & { day: string; source: string }
    >`select d::date::text as day, l.source, l.load_id, l.status,
        l.started_at, l.finished_at, l.rows_loaded
      from generate_series(${from}::date, ${to}::date, interval '1 day') d
      join loads l on l.window_start < ((d::date + 1)::timestamp at time zone 'America/Toronto')
        and l.window_end > (d::date::timestamp at time zone 'America/Toronto')
      where ${inScope('l', accounts)}
      order by day, l.source, l.load_id`.execute(db),
    sql<{ day: string; run_id: number }>`select d::date::text as day, r.run_id
      from generate_series(${from}::date, ${to}::date, interval '1 day') d
      join reconcile_runs r on d::date between r.range_from and r.range_to
      where r.finished_at is not null and ${inScope('r', accounts)}
      order by day, r.run_id`.execute(db),
    sql<{ source: string }>`select distinct source from loads l
      where status = 'committed' and window_start is not null and ${inScope('l', accounts)}
      order by source`.execute(db),
  ]);
  const expected = sources.rows.map((r) => r.source);
  const byDay = new Map<string, CoverageDay>();
  for (const date of datesBetween(from, to)) {
    byDay.set(date, {
      date,
      business_day: isBusinessDay(date),
      sources: {},
      missing: [],
      failed: [],
      runs: [],
      low_volume: [],
    });
  }
  for (const l of loads.rows) {
    const day = byDay.get(l.day);
    if (!day) continue;
    (day.sources[l.source] ??= []).push({
      load_id: l.load_id,
      status: l.status,
      started_at: l.started_at,
      finished_at: l.finished_at,
      rows_loaded: l.rows_loaded,
    });
  }
  for (const r of runs.rows) byDay.get(r.day)?.runs.push(r.run_id);
  const flags = await openFlags(db, null, from, to);
  for (const f of flags.filter(
    (x) => accounts === 'all' || (accounts as readonly string[]).includes(x.account),
  )) {
    byDay.get(f.day)?.low_volume.push({
      account: f.account,
      source: f.source,
      rows: f.rows,
      usual_rows: f.usualRows,
      baseline_days: f.baselineDays,
    });
  }
  for (const day of byDay.values()) {
    for (const source of expected) {
      const ls = day.sources[source] ?? [];
      const committed = ls.some((l) => l.status === 'committed');
      if (!committed && ls.some((l) => l.status === 'failed')) day.failed.push(source);
      if (!committed && day.business_day) day.missing.push(source);
    }
  }
  return { sources: expected, days: [...byDay.values()] };
}

/**
 * The last Eastern day that holds data: the latest day a committed pulled load covers or a finished
 * reconcile run reaches; null for an empty warehouse. Coverage opens on the days up to it, so that a
 * warehouse loaded for past months (the demo's) is not shown as a month of missing days.
 */
export async function lastDayWithData(db: Db, accounts: AccountScope): Promise<string | null> {
  const row = await sql<{ day: string | null }>`select greatest(
      (select ((max(window_end) at time zone 'America/Toronto') - interval '1 microsecond')::date
        from loads l where status = 'committed' and window_end is not null and ${inScope('l', accounts)}),
      (select max(range_to) from reconcile_runs r where finished_at is not null and ${inScope('r', accounts)}))::text
      as day`.execute(db);
  return row.rows[0]?.day ?? null;
}
