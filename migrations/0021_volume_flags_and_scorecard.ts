import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * No day looks clean because nothing arrived (issue 25, section 4).
 *
 * `volume_flags`: a business day on which a source that usually has volume held nothing, or far less
 * than usual, for one account: the rows it held, the usual figure it was compared with and the
 * settings of the comparison (reconcile/volume/, docs/operations.md). Written by the nightly run and
 * at the end of a backfill; read by the coverage calendar and the alerts.
 *
 * `provider_scorecard`: per account, source and Eastern day, how late the provider's data arrived,
 * how late notifications came, and rows of one source absent from its sibling (docs/analysts.md).
 *
 * `alert_deliveries.kind` gains `volume`.
 */

// The account name check in the form of migration 0012, which spares the regex for 'default'.
const NAME_CHECK = `account = 'default' or (length(account) <= 32 and account ~ '^[a-z0-9-]+$')`;
const SOURCES = `'report-transactions','report-returns','legacy-transactions','legacy-returns','legacy-adjustments'`;
const VISIBLE = (col: string) => `public.account_visible(${col}, current_user)`;
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

const FLAG_COLUMNS: readonly [string, string, string][] = [
  [
    'account',
    `text not null constraint volume_flags_account_name check (${NAME_CHECK})`,
    'Provider account the day was checked for.',
  ],
  ['source', `text not null check (source in (${SOURCES}))`, 'The source whose rows were counted.'],
  ['business_date', 'date not null', 'The Eastern business day that held too few rows.'],
  [
    'rows_loaded',
    'bigint not null check (rows_loaded >= 0)',
    "Rows of the source for that day in the warehouse when last checked (by the source's own day column: transaction_on, returned_on or adjusted_on).",
  ],
  [
    'usual_rows',
    'bigint not null check (usual_rows >= 0)',
    'The figure it was compared with: the median of the same source and account over the loaded business days of the baseline before the day (the mean of the two middle values, rounded down, for an even count).',
  ],
  [
    'baseline_days',
    'integer not null check (baseline_days >= 1)',
    'How many business days the median was taken over (loaded days on or after the source’s first data, among RECON_VOLUME_BASELINE_DAYS business days before the day).',
  ],
  [
    'low_percent',
    'integer not null check (low_percent between 0 and 100)',
    'RECON_VOLUME_LOW_PERCENT when checked: the day is flagged when rows_loaded * 100 < usual_rows * low_percent.',
  ],
  [
    'first_flagged_at',
    'timestamptz not null default now()',
    'When the day was first flagged (UTC); kept when a later check flags it again.',
  ],
  ['checked_at', 'timestamptz not null default now()', 'When the day was last checked (UTC).'],
  [
    'cleared_at',
    'timestamptz',
    'When a later check found the day no longer low (rows arrived late), UTC; null while the flag holds.',
  ],
  [
    'alerted_at',
    'timestamptz',
    'When the flag was sent to the alert webhooks (RECON_ALERT_WEBHOOKS), UTC; null when not yet, or when none are configured.',
  ],
];

/**
 * Rows of each source, by account and Eastern day, with the load that first held each row. A row both
 * interfaces send is counted under the one whose name it carries (provider_transactions.source,
 * provider_returns.source); legacy transactions have their own table.
 */
const SOURCE_ROWS = `
  select account, 'report-transactions'::text as source, transaction_on as business_date, transaction_id,
    first_load_id, load_id from provider_transactions where source = 'report-transactions'
  union all
  select account, 'legacy-transactions', transaction_on, transaction_id, first_load_id, load_id
    from legacy_transactions
  union all
  select account, source, returned_on, return_transaction_id, first_load_id, load_id
    from provider_returns where returned_on is not null
  union all
  select account, 'legacy-adjustments', adjusted_on, transaction_id, first_load_id, load_id
    from provider_adjustments`;

const ALERT_KEY =
  'What the alert is about: summary:<window workflow run id> (a reconcile run of a window) or failure:<window workflow run id> (a window that failed after its retries)';

/** The Eastern day a notification was received: the expression of notifications_received_day_idx. */
const RECEIVED_DAY = (n: string) => `((${n}.received_at at time zone 'America/Toronto')::date)`;

const DAY_END = (day: string) => `((${day} + 1)::timestamp at time zone 'America/Toronto')`;

/**
 * The parts (rows, notifications, covering loads) are stacked and grouped rather than joined, so
 * that a filter on account, source or business_date reaches each part's own tables (their day
 * indexes) instead of being applied after the whole warehouse is grouped. Notifications come in two
 * parts (known to the provider, not known): their counts add up.
 */
const SCORECARD = () => `
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
  ${SCORECARD_ROWS}
  union all
  ${SCORECARD_COVERED}
) u
where ${VISIBLE('u.account')}
group by u.account, u.source, u.business_date`;

/**
 * Notified transactions the provider has, on the transaction's day: the delay of the first receipt
 * after the transaction's time. Read from the provider rows of the day (their day index), each
 * probing its notifications, so that a filter on business_date never reads every notification.
 */
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

/** Notified transactions the provider does not have, on the Eastern day of their first receipt. */
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

/** Per account, source and day: the rows, the first load that held them, and the sibling counts. */
const SCORECARD_ROWS = `
select r.account, r.source, r.business_date, sum(r.rows)::bigint as rows,
  null::bigint as first_covering_load_id, null::timestamptz as first_covered_at,
  (array_agg(r.held_by order by r.held_at nulls last, r.held_by))[1] as first_load_id,
  min(r.held_at) as first_loaded_at,
  null::bigint as notification_delay_p50_seconds, null::bigint as notification_delay_p95_seconds,
  case r.source when 'report-transactions' then 'legacy-transactions'
    when 'legacy-transactions' then 'report-transactions' end as sibling_source,
  case when r.source in ('report-transactions', 'legacy-transactions')
    then sum(r.not_in_sibling)::bigint end as rows_not_in_sibling,
  case when r.source = 'report-transactions' then sum(r.not_notified)::bigint end as rows_not_notified
from (
  select g.account, g.source, g.business_date, g.rows, g.not_in_sibling, g.not_notified,
    case when f.source = g.source then f.load_id else l.load_id end as held_by,
    case when f.source = g.source then f.finished_at else l.finished_at end as held_at
  from (
    select s.account, s.source, s.business_date, s.first_load_id, s.load_id, count(*) as rows,
      count(*) filter (where case s.source
        when 'report-transactions' then not exists (select 1 from legacy_transactions x
          where x.account = s.account and x.transaction_id = s.transaction_id)
        when 'legacy-transactions' then not exists (select 1 from provider_transactions x
          where x.account = s.account and x.transaction_id = s.transaction_id and x.source = 'report-transactions')
        else false end) as not_in_sibling,
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
${NOTIFIED_UNKNOWN}`;

/** Per account, source and day: the first committed load whose window covered the day. */
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

const SCORECARD_COMMENTS: Record<string, string> = {
  account:
    'Provider account of the row (see the account column of its table). A login limited to some accounts (recon analysts grant --accounts) sees only their rows.',
  source:
    'report-transactions, legacy-transactions, report-returns, legacy-returns, legacy-adjustments, or notifications (transaction notifications received).',
  business_date:
    "Eastern day: the rows' own day column (transaction_on, returned_on, adjusted_on); for notifications, the transaction's day when the provider has the transaction, else the Eastern day of the first receipt.",
  rows: 'Rows of the source for the day in the warehouse now (notifications: transactions notified). A row both interfaces send counts under the source it carries.',
  first_covering_load_id:
    'The first committed load (by finish time) whose window covered the day, whether or not it held rows of it; null for files and notifications.',
  first_covered_at: 'When that load finished (UTC).',
  first_load_id:
    "The first load that held the day's data: the earliest-finished among each row's first load of this source (or, for a row another source wrote first, the load of this source that wrote it last).",
  first_loaded_at: 'When that load finished (UTC).',
  arrival_delay_seconds:
    'How late the data arrived: first_loaded_at minus the end of the Eastern day (midnight America/Toronto after it), in seconds.',
  notification_delay_p50_seconds:
    "notifications only: median, over the day's notified transactions, of the first receipt (received_at) minus the transaction's time at the provider (provider_transactions.transaction_at), in seconds; null when no notified transaction is known to the provider.",
  notification_delay_p95_seconds: 'notifications only: the 95th percentile of the same delays, in seconds.',
  sibling_source:
    'The source this one is compared with: legacy-transactions for report-transactions and back, report-transactions for notifications; null for returns and adjustments.',
  rows_not_in_sibling:
    "Rows of the day present in this source and absent from its sibling: report rows with no legacy row of the same transaction id, legacy rows with no report row, notified transactions with no report row. The legacy e-transfer product's transactions are legacy-only by nature.",
  rows_not_notified:
    'report-transactions only: report rows of the day for which no transaction notification was received.',
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `create table volume_flags (${FLAG_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')},
        primary key (account, source, business_date))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on table volume_flags is ${lit('Business days on which a source that usually has volume held nothing or far less than usual, per account: the rows, the usual figure and the settings compared (docs/operations.md, Low-volume days). Written by the nightly run and at the end of a backfill.')}`,
    )
    .execute(db);
  for (const [name, , comment] of FLAG_COLUMNS) {
    await sql.raw(`comment on column volume_flags.${name} is ${lit(comment)}`).execute(db);
  }
  await sql.raw('create index volume_flags_date_idx on volume_flags (business_date)').execute(db);
  await sql.raw('alter table volume_flags enable row level security').execute(db);
  await sql
    .raw(`create policy volume_flags_by_account on volume_flags for all using (${VISIBLE('account')})`)
    .execute(db);

  await sql
    .raw(
      `alter table alert_deliveries drop constraint alert_deliveries_kind_check,
        add constraint alert_deliveries_kind_check check (kind in ('summary','failure','volume'))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column alert_deliveries.kind is ${lit('summary (a reconcile run), failure (a window that failed) or volume (low-volume days, volume_flags).')}`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column alert_deliveries.alert_key is ${lit(`${ALERT_KEY} or volume:<account>:<hash of the flagged sources and days> (low-volume days of volume_flags, sent once).`)}`,
    )
    .execute(db);

  // The scorecard's notifications unknown to the provider, read by the day of their receipt.
  await sql
    .raw(
      `create index notifications_received_day_idx on notifications (${RECEIVED_DAY('notifications')}) where kind = 'transaction'`,
    )
    .execute(db);
  await sql.raw(`create view provider_scorecard with (security_barrier) as ${SCORECARD()}`).execute(db);
  await sql
    .raw(
      `comment on view provider_scorecard is ${lit('Provider scorecard per account, source and Eastern day: rows, how late the data arrived (the first load that held it), how late notifications came (p50, p95) and rows present in one source and not in its sibling (docs/analysts.md).')}`,
    )
    .execute(db);
  for (const [column, comment] of Object.entries(SCORECARD_COMMENTS)) {
    await sql.raw(`comment on column provider_scorecard.${column} is ${lit(comment)}`).execute(db);
  }
  await sql
    .raw(
      `do $$ begin
         if exists (select from pg_roles where rolname = 'recon_analyst') then
           grant select on provider_scorecard, volume_flags to recon_analyst;
         end if;
       end $$`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop view provider_scorecard').execute(db);
  await sql.raw('drop index notifications_received_day_idx').execute(db);
  await sql.raw(`delete from alert_deliveries where kind = 'volume'`).execute(db);
  await sql
    .raw(
      `alter table alert_deliveries drop constraint alert_deliveries_kind_check,
        add constraint alert_deliveries_kind_check check (kind in ('summary','failure'))`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on column alert_deliveries.kind is ${lit('summary (a reconcile run) or failure (a window that failed).')}`,
    )
    .execute(db);
  await sql.raw(`comment on column alert_deliveries.alert_key is ${lit(`${ALERT_KEY}.`)}`).execute(db);
  await sql.raw('drop table volume_flags').execute(db);
}
