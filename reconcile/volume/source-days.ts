/**
 * What the low-volume check reads of one account: each source's rows per Eastern day, the days a
 * committed load of the source covered after the day had ended, and each source's first day of data.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { SOURCES, type Source } from '../../domain/records.ts';
import type { SourceDays } from './judge-volume.ts';

/**
 * Where each source's rows are and which column is their Eastern day. A row both interfaces send is
 * counted under the source it carries (provider_transactions.source, provider_returns.source); the
 * legacy interface's transactions have their own table. Migration 0021's provider_scorecard counts
 * rows the same way.
 */
export const SOURCE_ROWS: Readonly<Record<Source, { table: string; day: string; where: string }>> = {
  'report-transactions': {
    table: 'provider_transactions',
    day: 'transaction_on',
    where: `source = 'report-transactions'`,
  },
  'legacy-transactions': { table: 'legacy_transactions', day: 'transaction_on', where: 'true' },
  'report-returns': { table: 'provider_returns', day: 'returned_on', where: `source = 'report-returns'` },
  'legacy-returns': { table: 'provider_returns', day: 'returned_on', where: `source = 'legacy-returns'` },
  'legacy-adjustments': { table: 'provider_adjustments', day: 'adjusted_on', where: 'true' },
};

/** Rows per source and Eastern day of `account`, days `from`..`to`. */
function rowsPerDayStatement(account: string, from: string, to: string) {
  const parts = SOURCES.map((source) => {
    const s = SOURCE_ROWS[source];
    return sql`select ${source}::text as source, ${sql.ref(s.day)}::text as day, count(*)::int as rows
      from ${sql.table(s.table)}
      where account = ${account} and ${sql.raw(s.where)} and ${sql.ref(s.day)} between ${from}::date and ${to}::date
      group by ${sql.ref(s.day)}`;
  });
  return sql<{ source: Source; day: string; rows: number }>`${sql.join(parts, sql` union all `)}`;
}

/**
 * Days `from`..`to` that a committed load of each source covered whole: its window held the day and
 * it started after the day had ended (a load started at 02:30 holds two and a half hours of that day).
 */
function loadedDaysStatement(account: string, from: string, to: string) {
  return sql<{ source: Source; day: string }>`select distinct l.source, d::date::text as day
    from loads l
    cross join lateral generate_series(
      (l.window_start at time zone 'America/Toronto')::date,
      ((l.window_end - interval '1 microsecond') at time zone 'America/Toronto')::date,
      interval '1 day') d
    where l.account = ${account} and l.status = 'committed' and l.window_start is not null
      and l.window_end > l.window_start
      and l.window_start < ((${to}::date + 1)::timestamp at time zone 'America/Toronto')
      and l.window_end > (${from}::date::timestamp at time zone 'America/Toronto')
      and d::date between ${from}::date and ${to}::date
      and l.started_at >= ((d::date + 1)::timestamp at time zone 'America/Toronto')`;
}

/** The first Eastern day with a row of `source` of `account`, or null. */
async function firstDataDay(db: Db, account: string, source: Source): Promise<string | null> {
  const s = SOURCE_ROWS[source];
  const r = await sql<{ day: string | null }>`select min(${sql.ref(s.day)})::text as day
    from ${sql.table(s.table)} where account = ${account} and ${sql.raw(s.where)}`.execute(db);
  return r.rows[0]?.day ?? null;
}

/** Every source's days of `account` from `from` (the first baseline day) to `to`. */
export async function readSourceDays(
  db: Db,
  account: string,
  from: string,
  to: string,
): Promise<SourceDays[]> {
  const [rows, loaded, firsts] = await Promise.all([
    rowsPerDayStatement(account, from, to).execute(db),
    loadedDaysStatement(account, from, to).execute(db),
    Promise.all(SOURCES.map((source) => firstDataDay(db, account, source))),
  ]);
  return SOURCES.map((source, i) => ({
    source,
    rows: new Map(rows.rows.filter((r) => r.source === source).map((r) => [r.day, r.rows])),
    loaded: new Set(loaded.rows.filter((r) => r.source === source).map((r) => r.day)),
    firstDataDay: firsts[i]!,
  }));
}
