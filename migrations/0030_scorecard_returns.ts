import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * The provider scorecard gains the returns siblings (issue 25, sections 3 and 4): return
 * notifications against the return report, rows in one and not the other, per account and Eastern
 * day.
 *
 * - `report-returns` rows name `return-notifications` as their sibling: rows_not_in_sibling counts the
 *   day's report returns that no return notification names (by the return transaction id or the
 *   original's: the interface does not show which the provider sends).
 * - `return-notifications` rows: the transaction ids the return notifications named, on the Eastern
 *   day of their first receipt; rows_not_in_sibling counts those no return report lists (by either id).
 *
 * The view is 0021's with these two changes (the rest of its text is copied as it was, since a
 * migration imports nothing); down restores 0021's.
 */

const VISIBLE = (col: string) => `public.account_visible(${col}, current_user)`;
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
const SOURCES = `'report-transactions','report-returns','legacy-transactions','legacy-returns','legacy-adjustments'`;
const RECEIVED_DAY = (n: string) => `((${n}.received_at at time zone 'America/Toronto')::date)`;
const DAY_END = (day: string) => `((${day} + 1)::timestamp at time zone 'America/Toronto')`;

/** Rows of each source with, for returns, the original's transaction id (other_id). */
const SOURCE_ROWS = `
  select account, 'report-transactions'::text as source, transaction_on as business_date, transaction_id,
    null::text as other_id, first_load_id, load_id from provider_transactions where source = 'report-transactions'
  union all
  select account, 'legacy-transactions', transaction_on, transaction_id, null, first_load_id, load_id
    from legacy_transactions
  union all
  select account, source, returned_on, return_transaction_id, original_transaction_id, first_load_id, load_id
    from provider_returns where returned_on is not null
  union all
  select account, 'legacy-adjustments', adjusted_on, transaction_id, null, first_load_id, load_id
    from provider_adjustments`;

/** A return notification of the row's account naming `id`. */
const RETURN_NOTIFIED = (id: string) => `exists (select 1 from notifications x
  where x.account = s.account and x.kind = 'return' and x.transaction_id = ${id})`;

const NOT_IN_SIBLING = (withReturns: boolean) => `case s.source
        when 'report-transactions' then not exists (select 1 from legacy_transactions x
          where x.account = s.account and x.transaction_id = s.transaction_id)
        when 'legacy-transactions' then not exists (select 1 from provider_transactions x
          where x.account = s.account and x.transaction_id = s.transaction_id and x.source = 'report-transactions')
        ${withReturns ? `when 'report-returns' then not (${RETURN_NOTIFIED('s.transaction_id')} or (s.other_id is not null and ${RETURN_NOTIFIED('s.other_id')}))` : ''}
        else false end`;

const SIBLINGS = (
  withReturns: boolean,
) => `case r.source when 'report-transactions' then 'legacy-transactions'
    when 'legacy-transactions' then 'report-transactions'
    ${withReturns ? `when 'report-returns' then 'return-notifications'` : ''} end`;

const COMPARED = (withReturns: boolean) =>
  withReturns
    ? `('report-transactions', 'legacy-transactions', 'report-returns')`
    : `('report-transactions', 'legacy-transactions')`;

const NOTIFIED_KNOWN = `
select t.account, 'notifications', t.transaction_on,
  count(*)::bigint, null::bigint, null::timestamptz, null::bigint, null::timestamptz,
  (percentile_disc(0.5) within group (order by extract(epoch from (t.first_received_at - t.transaction_at))))::bigint,
  (percentile_disc(0.95) within group (order by extract(epoch from (t.first_received_at - t.transaction_at))))::bigint,
  'report-transactions',
  (count(*) filter (where t.source <> 'report-transactions'))::bigint,
  null::bigint
from (
  select p.account, p.transaction_on, p.transaction_at, p.source,
    (select min(n.received_at) from notifications n
      where n.account = p.account and n.kind = 'transaction' and n.transaction_id = p.transaction_id) as first_received_at
  from provider_transactions p
) t
where t.first_received_at is not null
group by t.account, t.transaction_on`;

const NOTIFIED_UNKNOWN = `
select n.account, 'notifications', ${RECEIVED_DAY('n')},
  count(*)::bigint, null::bigint, null::timestamptz, null::bigint, null::timestamptz,
  null::bigint, null::bigint, 'report-transactions', count(*)::bigint, null::bigint
from notifications n
where n.kind = 'transaction' and n.transaction_id is not null
  and not exists (select 1 from provider_transactions p
    where p.account = n.account and p.transaction_id = n.transaction_id)
  and not exists (select 1 from notifications e
    where e.account = n.account and e.kind = 'transaction' and e.transaction_id = n.transaction_id
      and (e.received_at, e.notification_id) < (n.received_at, n.notification_id))
group by n.account, ${RECEIVED_DAY('n')}`;

/**
 * Return notifications, one per transaction id named, on the Eastern day of its first receipt; those
 * no return report lists by the return's id or its original's.
 */
const RETURNS_NOTIFIED = `
select n.account, 'return-notifications', ${RECEIVED_DAY('n')},
  count(*)::bigint, null::bigint, null::timestamptz, null::bigint, null::timestamptz,
  null::bigint, null::bigint, 'report-returns',
  (count(*) filter (where not exists (select 1 from provider_returns r
      where r.account = n.account and r.return_transaction_id = n.transaction_id)
    and not exists (select 1 from provider_returns r
      where r.account = n.account and r.original_transaction_id = n.transaction_id)))::bigint,
  null::bigint
from notifications n
where n.kind = 'return' and n.transaction_id is not null
  and not exists (select 1 from notifications e
    where e.account = n.account and e.kind = 'return' and e.transaction_id = n.transaction_id
      and (e.received_at, e.notification_id) < (n.received_at, n.notification_id))
group by n.account, ${RECEIVED_DAY('n')}`;

const SCORECARD_ROWS = (withReturns: boolean) => `
select r.account, r.source, r.business_date, sum(r.rows)::bigint as rows,
  null::bigint as first_covering_load_id, null::timestamptz as first_covered_at,
  (array_agg(r.held_by order by r.held_at nulls last, r.held_by))[1] as first_load_id,
  min(r.held_at) as first_loaded_at,
  null::bigint as notification_delay_p50_seconds, null::bigint as notification_delay_p95_seconds,
  ${SIBLINGS(withReturns)} as sibling_source,
  case when r.source in ${COMPARED(withReturns)}
    then sum(r.not_in_sibling)::bigint end as rows_not_in_sibling,
  case when r.source = 'report-transactions' then sum(r.not_notified)::bigint end as rows_not_notified
from (
  select g.account, g.source, g.business_date, g.rows, g.not_in_sibling, g.not_notified,
    case when f.source = g.source then f.load_id else l.load_id end as held_by,
    case when f.source = g.source then f.finished_at else l.finished_at end as held_at
  from (
    select s.account, s.source, s.business_date, s.first_load_id, s.load_id, count(*) as rows,
      count(*) filter (where ${NOT_IN_SIBLING(withReturns)}) as not_in_sibling,
      count(*) filter (where s.source = 'report-transactions' and not exists (select 1 from notifications x
          where x.account = s.account and x.kind = 'transaction' and x.transaction_id = s.transaction_id)) as not_notified
    from (${SOURCE_ROWS}) s
    group by s.account, s.source, s.business_date, s.first_load_id, s.load_id
  ) g
  left join loads f on f.load_id = g.first_load_id
  left join loads l on l.load_id = g.load_id
) r
group by r.account, r.source, r.business_date
union all
${NOTIFIED_KNOWN}
union all
${NOTIFIED_UNKNOWN}
${withReturns ? `union all ${RETURNS_NOTIFIED}` : ''}`;

const SCORECARD_COVERED = `
select l.account, l.source, d::date as business_date, null::bigint as rows,
  (array_agg(l.load_id order by l.finished_at, l.load_id))[1] as first_covering_load_id,
  min(l.finished_at) as first_covered_at, null::bigint as first_load_id, null::timestamptz as first_loaded_at,
  null::bigint as notification_delay_p50_seconds, null::bigint as notification_delay_p95_seconds,
  null::text as sibling_source, null::bigint as rows_not_in_sibling, null::bigint as rows_not_notified
from loads l
cross join lateral generate_series(
  (l.window_start at time zone 'America/Toronto')::date,
  ((l.window_end - interval '1 microsecond') at time zone 'America/Toronto')::date,
  interval '1 day') d
where l.status = 'committed' and l.window_start is not null and l.window_end > l.window_start
  and l.source in (${SOURCES})
group by l.account, l.source, d::date`;

const SCORECARD = (withReturns: boolean) => `
select u.account, u.source, u.business_date,
  coalesce(sum(u.rows), 0)::bigint as rows,
  max(u.first_covering_load_id) as first_covering_load_id, max(u.first_covered_at) as first_covered_at,
  max(u.first_load_id) as first_load_id, max(u.first_loaded_at) as first_loaded_at,
  (extract(epoch from (max(u.first_loaded_at) - ${DAY_END('u.business_date')})))::bigint as arrival_delay_seconds,
  max(u.notification_delay_p50_seconds) as notification_delay_p50_seconds,
  max(u.notification_delay_p95_seconds) as notification_delay_p95_seconds,
  max(u.sibling_source) as sibling_source, sum(u.rows_not_in_sibling)::bigint as rows_not_in_sibling,
  max(u.rows_not_notified) as rows_not_notified
from (
  ${SCORECARD_ROWS(withReturns)}
  union all
  ${SCORECARD_COVERED}
) u
where ${VISIBLE('u.account')}
group by u.account, u.source, u.business_date`;

const COMMENTS = (withReturns: boolean): Record<string, string> =>
  withReturns
    ? {
        source:
          'report-transactions, legacy-transactions, report-returns, legacy-returns, legacy-adjustments, notifications (transaction notifications received) or return-notifications (return notifications received).',
        business_date:
          "Eastern day: the rows' own day column (transaction_on, returned_on, adjusted_on); for notifications, the transaction's day when the provider has the transaction, else the Eastern day of the first receipt; for return-notifications, the Eastern day of the first receipt.",
        rows: 'Rows of the source for the day in the warehouse now (notifications: transactions notified; return-notifications: transaction ids the return notifications named). A row both interfaces send counts under the source it carries.',
        sibling_source:
          'The source this one is compared with: legacy-transactions for report-transactions and back, report-transactions for notifications, return-notifications for report-returns and report-returns for return-notifications; null for legacy returns and adjustments.',
        rows_not_in_sibling:
          "Rows of the day present in this source and absent from its sibling: report rows with no legacy row of the same transaction id, legacy rows with no report row, notified transactions with no report row, report returns no return notification names (by the return's id or its original's), return notifications no return report lists (by either id). The legacy e-transfer product's transactions are legacy-only by nature.",
      }
    : {
        source:
          'report-transactions, legacy-transactions, report-returns, legacy-returns, legacy-adjustments, or notifications (transaction notifications received).',
        business_date:
          "Eastern day: the rows' own day column (transaction_on, returned_on, adjusted_on); for notifications, the transaction's day when the provider has the transaction, else the Eastern day of the first receipt.",
        rows: 'Rows of the source for the day in the warehouse now (notifications: transactions notified). A row both interfaces send counts under the source it carries.',
        sibling_source:
          'The source this one is compared with: legacy-transactions for report-transactions and back, report-transactions for notifications; null for returns and adjustments.',
        rows_not_in_sibling:
          "Rows of the day present in this source and absent from its sibling: report rows with no legacy row of the same transaction id, legacy rows with no report row, notified transactions with no report row. The legacy e-transfer product's transactions are legacy-only by nature.",
      };

async function replaceScorecard(db: Kysely<any>, withReturns: boolean): Promise<void> {
  // Same columns in the same order: the analysts' grant and the column comments not listed stay.
  await sql
    .raw(`create or replace view provider_scorecard with (security_barrier) as ${SCORECARD(withReturns)}`)
    .execute(db);
  for (const [column, comment] of Object.entries(COMMENTS(withReturns))) {
    await sql.raw(`comment on column provider_scorecard.${column} is ${lit(comment)}`).execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  // The return notifications of a day, read by the day of their receipt (as 0021's for transactions).
  await sql
    .raw(
      `create index notifications_return_received_day_idx on notifications (${RECEIVED_DAY('notifications')}) where kind = 'return'`,
    )
    .execute(db);
  await replaceScorecard(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceScorecard(db, false);
  await sql.raw('drop index notifications_return_received_day_idx').execute(db);
}
