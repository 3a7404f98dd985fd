/**
 * The overview a finance lead looks at: open money at stake per business day and currency, new and
 * resolved discrepancies per Eastern day, the share of provider transactions with no unresolved
 * discrepancy per business day, and the age of open items in buckets. Every figure comes from the
 * discrepancies and provider transactions as they are now (a discrepancy reopened later counts as
 * open, as the worklist shows it).
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { addDays, daysInclusive, isValidDate } from '../../domain/time/calendar.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { scopeCondition, type AccountScope } from '../../reconcile/discrepancies/filter.ts';

export interface OpenByDay {
  day: string;
  currency: string | null;
  count: number;
  cents: number;
}
export interface ActivityDay {
  day: string;
  opened: number;
  resolved: number;
}
export interface MatchedDay {
  day: string;
  transactions: number;
  clean: number;
}
export interface AgeBucket {
  bucket: string;
  currency: string | null;
  count: number;
  cents: number;
}

export interface Overview {
  /** Business dates of the open-money and matched charts, inclusive. */
  from: string;
  to: string;
  /** Eastern days of the new-against-resolved chart, inclusive. */
  activityFrom: string;
  activityTo: string;
  open: OpenByDay[];
  activity: ActivityDay[];
  matched: MatchedDay[];
  ages: AgeBucket[];
  /** The Eastern day ages are counted to. */
  today: string;
}

/** Age buckets of open items, in days since their business date (lower bound, label). */
export const AGE_BUCKETS: readonly (readonly [number, string])[] = [
  [0, '0–7 days'],
  [8, '8–30 days'],
  [31, '31–60 days'],
  [61, '61–90 days'],
  [91, 'over 90 days'],
];

/** Days the charts cover unless asked otherwise. */
export const OVERVIEW_DAYS = 90;

/**
 * The business dates to show: as asked when valid, else those holding discrepancies or transactions,
 * at most the last {@link OVERVIEW_DAYS} of them (so that a warehouse loaded for past months opens
 * on them), or today for an empty one. The provider's days are read from provider_transaction_days
 * (migration 0042): provider_transactions' index of days is a BRIN index, which cannot give min/max.
 */
export async function overviewRange(
  db: Db,
  asked: { from?: string; to?: string },
  today: string,
  accounts: AccountScope,
): Promise<{ from: string; to: string }> {
  if (asked.from && asked.to && isValidDate(asked.from) && isValidDate(asked.to)) {
    const days = daysInclusive(asked.from, asked.to);
    if (days >= 1 && days <= 400) return { from: asked.from, to: asked.to };
  }
  const span = await sql<{ first: string | null; last: string | null }>`select
      least((select min(business_date) from discrepancies where ${scopeCondition(accounts)}),
        (select min(transaction_on) from provider_transaction_days where ${scopeCondition(accounts)}))::text as first,
      greatest((select max(business_date) from discrepancies where ${scopeCondition(accounts)}),
        (select max(transaction_on) from provider_transaction_days where ${scopeCondition(accounts)}))::text as last`.execute(
    db,
  );
  const to = span.rows[0]?.last ?? today;
  const earliest = addDays(to, -(OVERVIEW_DAYS - 1));
  const first = span.rows[0]?.first;
  return { from: first && first > earliest ? first : earliest, to };
}

async function openByDay(db: Db, from: string, to: string, accounts: AccountScope): Promise<OpenByDay[]> {
  const rows = await sql<OpenByDay>`select business_date::text as day, nullif(currency, '') as currency,
      count(*)::bigint as count, coalesce(sum(stake_cents), 0)::bigint as cents
    from discrepancies where resolved_at is null and business_date between ${from}::date and ${to}::date
      and ${scopeCondition(accounts)}
    group by 1, 2 order by 1, 2`.execute(db);
  return rows.rows;
}

async function activity(db: Db, from: string, to: string, accounts: AccountScope): Promise<ActivityDay[]> {
  const start = sql`(${from}::date::timestamp at time zone 'America/Toronto')`;
  const end = sql`((${to}::date + 1)::timestamp at time zone 'America/Toronto')`;
  const rows =
    await sql<ActivityDay>`select day, sum(opened)::bigint as opened, sum(resolved)::bigint as resolved
    from (
      select (first_seen_at at time zone 'America/Toronto')::date::text as day, 1 as opened, 0 as resolved
        from discrepancies where first_seen_at >= ${start} and first_seen_at < ${end}
          and ${scopeCondition(accounts)}
      union all
      select (resolved_at at time zone 'America/Toronto')::date::text, 0, 1
        from discrepancies where resolved_at >= ${start} and resolved_at < ${end}
          and ${scopeCondition(accounts)}
    ) e group by day order by day`.execute(db);
  return rows.rows;
}

async function matchedByDay(db: Db, from: string, to: string, accounts: AccountScope): Promise<MatchedDay[]> {
  const rows = await sql<MatchedDay>`select t.transaction_on::text as day, count(*)::bigint as transactions,
      count(*) filter (where not exists (select 1 from discrepancies d
        where d.transaction_id = t.transaction_id and d.account = t.account and d.resolved_at is null))::bigint
        as clean
    from provider_transactions t where t.transaction_on between ${from}::date and ${to}::date
      and ${scopeCondition(accounts)}
    group by 1 order by 1`.execute(db);
  return rows.rows;
}

async function ages(db: Db, today: string, accounts: AccountScope): Promise<AgeBucket[]> {
  const bounds = AGE_BUCKETS.map(([lower]) => lower);
  const rows = await sql<{ i: number; currency: string | null; count: number; cents: number }>`
    select width_bucket(${today}::date - coalesce(business_date, ${today}::date), ${bounds}::int[]) as i,
      nullif(currency, '') as currency, count(*)::bigint as count, coalesce(sum(stake_cents), 0)::bigint as cents
    from discrepancies where resolved_at is null and ${scopeCondition(accounts)} group by 1, 2 order by 1, 2`.execute(
    db,
  );
  return rows.rows.map((r) => ({
    bucket: AGE_BUCKETS[Math.max(0, Number(r.i) - 1)]![1],
    currency: r.currency,
    count: Number(r.count),
    cents: Number(r.cents),
  }));
}

/**
 * The overview's figures for the business dates asked (see {@link overviewRange}), of the accounts
 * of the caller's scope only (workbench/account-scope.ts).
 */
export async function overview(
  db: Db,
  asked: { from?: string; to?: string },
  accounts: AccountScope,
  now = new Date(),
): Promise<Overview> {
  const today = easternDateOf(now.toISOString());
  const { from, to } = await overviewRange(db, asked, today, accounts);
  const latestActivity = await sql<{ day: string | null }>`select (greatest(max(first_seen_at),
      max(resolved_at)) at time zone 'America/Toronto')::date::text as day from discrepancies
    where ${scopeCondition(accounts)}`.execute(db);
  const activityTo = latestActivity.rows[0]?.day ?? today;
  const activityFrom = addDays(activityTo, -29);
  const [open, act, matched, byAge] = await Promise.all([
    openByDay(db, from, to, accounts),
    activity(db, activityFrom, activityTo, accounts),
    matchedByDay(db, from, to, accounts),
    ages(db, today, accounts),
  ]);
  return { from, to, activityFrom, activityTo, open, activity: act, matched, ages: byAge, today };
}
