import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import type { ReconcileSettings } from './settings.ts';

/**
 * The matching rules, set-based SQL over the whole range at once. Each rule fills the temporary
 * table `findings` with the discrepancies that hold now; reconcile/apply-findings.ts turns them into
 * the discrepancies lifecycle. Rules only ever produce findings whose business date is in the range,
 * so that a run can resolve exactly the open discrepancies of its range.
 *
 * Matching is a function of the data, not of the order of runs: for a merchant transaction id, the
 * provider transaction that claims the ledger entry is chosen among all provider rows with that id
 * (agreeing amount, currency and type first, then SUCCESSFUL, then earliest, then smallest id).
 */
export interface RuleContext {
  readonly trx: Transaction<Database>;
  readonly from: string;
  readonly to: string;
  readonly asOf: string;
  readonly runId: number;
  readonly settings: ReconcileSettings;
  /** Eastern dates of the range whose grace period has run out at asOf. */
  readonly dueDates: string[];
}

const STATUS_CLASS = (col: string) =>
  `(case when ${col} in ('SUCCESSFUL','RETURNED') then 'ok' when ${col} in ('REJECTED','FAILED') then 'failed' end)`;

async function exec(ctx: RuleContext, query: RawBuilder<unknown>): Promise<number> {
  const result = await query.execute(ctx.trx);
  return Number(result.numAffectedRows ?? 0);
}

/** Temporary tables of one run: the scope and the findings. Dropped at commit. */
export async function prepareScope(ctx: RuleContext): Promise<void> {
  const { from, to } = ctx;
  await exec(
    ctx,
    sql`create temp table findings (
      discrepancy_key text primary key, kind text not null, rule text not null, transaction_id text,
      merchant_transaction_id text, return_transaction_id text, business_date date not null, currency char(3),
      expected jsonb, actual jsonb, expected_amount_cents bigint, actual_amount_cents bigint,
      difference_cents bigint, candidates jsonb) on commit drop`,
  );
  // Provider transactions of the range.
  await exec(
    ctx,
    sql`create temp table scope_p on commit drop as
      select transaction_id from provider_transactions where transaction_on between ${from}::date and ${to}::date`,
  );
  await exec(ctx, sql`alter table scope_p add primary key (transaction_id)`);
  // Ledger entries (DEBIT/CREDIT) booked on an Eastern date of the range.
  await exec(
    ctx,
    sql`create temp table scope_l on commit drop as
      select merchant_transaction_id, (booked_at at time zone 'America/Toronto')::date as booked_on
      from merchant_ledger
      where booked_at >= (${from}::date)::timestamp at time zone 'America/Toronto'
        and booked_at < ((${to}::date + 1))::timestamp at time zone 'America/Toronto'`,
  );
  // Every merchant transaction id touched by the range, from either side.
  await exec(
    ctx,
    sql`create temp table scope_m on commit drop as
      select p.merchant_transaction_id as mtid from provider_transactions p join scope_p using (transaction_id)
      where p.merchant_transaction_id is not null
      union
      select l.merchant_transaction_id from scope_l s join merchant_ledger l using (merchant_transaction_id)
      where l.transaction_type <> 'RETURN'`,
  );
  await exec(ctx, sql`alter table scope_m add primary key (mtid)`);
  // Rank every provider row of those ids: rank 1 claims the ledger entry, the others are duplicates.
  await exec(
    ctx,
    sql`create temp table ranked on commit drop as
      select p.transaction_id, p.merchant_transaction_id as mtid,
        row_number() over w as rank, count(*) over (partition by p.merchant_transaction_id) as n
      from provider_transactions p
      join scope_m m on m.mtid = p.merchant_transaction_id
      left join merchant_ledger l on l.merchant_transaction_id = p.merchant_transaction_id
      window w as (partition by p.merchant_transaction_id order by
        (l.merchant_transaction_id is not null and p.amount_cents = l.amount_cents and p.currency = l.currency
          and p.transaction_type is not distinct from l.transaction_type) desc,
        (p.status = 'SUCCESSFUL') desc, p.transaction_at nulls last, p.transaction_id)`,
  );
  await exec(ctx, sql`alter table ranked add primary key (transaction_id)`);
  await exec(ctx, sql`analyze scope_p, scope_l, scope_m, ranked`);
}

/** Provider transactions ↔ ledger by merchant transaction id; returns matches kept. */
export async function matchTransactions(ctx: RuleContext): Promise<number> {
  await exec(
    ctx,
    sql`create temp table want_tm on commit drop as
      select r.transaction_id, r.mtid from ranked r
      join merchant_ledger l on l.merchant_transaction_id = r.mtid
      where r.rank = 1`,
  );
  // Only what changed is touched, so that a re-run over unchanged data writes nothing.
  await exec(
    ctx,
    sql`delete from transaction_matches tm
      where (tm.merchant_transaction_id in (select mtid from scope_m)
             or tm.transaction_id in (select transaction_id from ranked))
        and not exists (select 1 from want_tm w
                        where w.transaction_id = tm.transaction_id and w.mtid = tm.merchant_transaction_id)`,
  );
  await exec(
    ctx,
    sql`insert into transaction_matches (transaction_id, merchant_transaction_id, rule, run_id)
      select transaction_id, mtid, 'merchant_transaction_id', ${ctx.runId}::bigint from want_tm
      on conflict do nothing`,
  );
  const count = await sql<{ n: number }>`select count(*)::int as n from transaction_matches tm
      join scope_p using (transaction_id)`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}

/** Findings about provider transactions and ledger DEBIT/CREDIT entries. */
export async function transactionFindings(ctx: RuleContext): Promise<void> {
  const { dueDates } = ctx;
  // missing_in_ledger: money moved (or may move) and the merchant has no entry.
  await exec(
    ctx,
    sql`insert into findings
      select 'missing_in_ledger:' || p.transaction_id, 'missing_in_ledger', 'transaction_vs_ledger',
        p.transaction_id, p.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('transaction_id', p.transaction_id, 'merchant_transaction_id', p.merchant_transaction_id,
          'transaction_type', p.transaction_type, 'status', p.status, 'amount_cents', p.amount_cents, 'currency', p.currency),
        null, p.amount_cents, null, null,
        jsonb_build_object('ledger', jsonb_build_array(), 'provider', jsonb_build_array(p.transaction_id))
      from provider_transactions p join scope_p using (transaction_id)
      left join ranked r using (transaction_id)
      where (r.transaction_id is null or r.rank = 1)
        and (p.status is null or p.status in ('SUCCESSFUL','PENDING','RETURNED'))
        and not exists (select 1 from merchant_ledger l where l.merchant_transaction_id = p.merchant_transaction_id)
      on conflict do nothing`,
  );
  // duplicate_merchant_transaction: a second provider row with a merchant transaction id already claimed.
  await exec(
    ctx,
    sql`insert into findings
      select 'duplicate_merchant_transaction:' || p.transaction_id, 'duplicate_merchant_transaction',
        'merchant_transaction_id_unique', p.transaction_id, p.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('transaction_id', first.transaction_id, 'merchant_transaction_id', r.mtid),
        jsonb_build_object('transaction_id', p.transaction_id, 'amount_cents', p.amount_cents, 'status', p.status),
        null, p.amount_cents, null,
        jsonb_build_object('provider', (select jsonb_agg(o.transaction_id order by o.rank) from ranked o where o.mtid = r.mtid))
      from ranked r join scope_p using (transaction_id)
      join provider_transactions p using (transaction_id)
      join ranked first on first.mtid = r.mtid and first.rank = 1
      where r.rank > 1
      on conflict do nothing`,
  );
  // Field comparisons of each claimed pair, business date of the provider row.
  const pairs = sql`from transaction_matches tm join scope_p using (transaction_id)
      join provider_transactions p using (transaction_id)
      join merchant_ledger l on l.merchant_transaction_id = tm.merchant_transaction_id`;
  const cands = sql`jsonb_build_object('ledger', jsonb_build_array(l.merchant_transaction_id), 'provider', jsonb_build_array(p.transaction_id))`;
  await exec(
    ctx,
    sql`insert into findings
      select 'amount_mismatch:' || p.transaction_id, 'amount_mismatch', 'transaction_vs_ledger', p.transaction_id,
        l.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('amount_cents', p.amount_cents), jsonb_build_object('amount_cents', l.amount_cents),
        p.amount_cents, l.amount_cents, l.amount_cents - p.amount_cents, ${cands}
      ${pairs} where p.amount_cents <> l.amount_cents
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'currency_mismatch:' || p.transaction_id, 'currency_mismatch', 'transaction_vs_ledger', p.transaction_id,
        l.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('currency', p.currency), jsonb_build_object('currency', l.currency),
        p.amount_cents, l.amount_cents, l.amount_cents - p.amount_cents, ${cands}
      ${pairs} where p.currency <> l.currency
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'type_mismatch:' || p.transaction_id, 'type_mismatch', 'transaction_vs_ledger', p.transaction_id,
        l.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('transaction_type', p.transaction_type), jsonb_build_object('transaction_type', l.transaction_type),
        p.amount_cents, l.amount_cents, l.amount_cents - p.amount_cents, ${cands}
      ${pairs} where p.transaction_type is not null and p.transaction_type <> l.transaction_type
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'status_mismatch:' || p.transaction_id, 'status_mismatch', 'transaction_vs_ledger', p.transaction_id,
        l.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('status', p.status, 'raw_status', p.raw_status), jsonb_build_object('status', l.status),
        p.amount_cents, l.amount_cents, l.amount_cents - p.amount_cents, ${cands}
      ${pairs} where ${sql.raw(STATUS_CLASS('p.status'))} <> ${sql.raw(STATUS_CLASS('l.status'))}
      on conflict do nothing`,
  );
  // missing_at_provider: a booked DEBIT/CREDIT the provider does not know once the grace period has run out.
  await exec(
    ctx,
    sql`insert into findings
      select 'missing_at_provider:' || l.merchant_transaction_id, 'missing_at_provider', 'ledger_vs_provider', l.transaction_id,
        l.merchant_transaction_id, null, s.booked_on, l.currency,
        jsonb_build_object('merchant_transaction_id', l.merchant_transaction_id, 'transaction_type', l.transaction_type,
          'status', l.status, 'amount_cents', l.amount_cents, 'currency', l.currency, 'booked_at', l.booked_at),
        null, l.amount_cents, null, null,
        jsonb_build_object('ledger', jsonb_build_array(l.merchant_transaction_id), 'provider', jsonb_build_array())
      from scope_l s join merchant_ledger l using (merchant_transaction_id)
      where l.transaction_type in ('DEBIT','CREDIT') and l.status not in ('REJECTED','FAILED')
        and s.booked_on = any(${dueDates}::date[])
        and not exists (select 1 from provider_transactions p where p.merchant_transaction_id = l.merchant_transaction_id)
      on conflict do nothing`,
  );
  // fee_mismatch against the contracted schedule, for successful transactions with a reported fee.
  await exec(
    ctx,
    sql`insert into findings
      select 'fee_mismatch:fee_vs_schedule:' || x.transaction_id, 'fee_mismatch', 'fee_vs_schedule', x.transaction_id,
        x.merchant_transaction_id, null, x.transaction_on, x.currency,
        jsonb_build_object('fee_cents', x.expected_fee, 'fixed_cents', x.fixed_cents, 'basis_points', x.basis_points, 'rounding', x.rounding,
          'amount_cents', x.amount_cents),
        jsonb_build_object('fee_cents', x.fee_cents),
        x.expected_fee, x.fee_cents, x.fee_cents - x.expected_fee,
        jsonb_build_object('fee_schedule', jsonb_build_array(x.schedule_key))
      from (
        select distinct on (p.transaction_id) p.transaction_id, p.merchant_transaction_id, p.transaction_on, p.currency,
          p.amount_cents, p.fee_cents, f.fixed_cents, f.basis_points, f.rounding,
          f.fixed_cents + (p.amount_cents * f.basis_points + case when f.rounding = 'floor' then 0 else 5000 end) / 10000 as expected_fee,
          f.product || '/' || f.transaction_type || '/' || f.currency || '/' || f.valid_from as schedule_key
        from provider_transactions p join scope_p using (transaction_id)
        join fee_schedule f on f.product = p.product and f.transaction_type = p.transaction_type
          and f.currency = p.currency and p.transaction_on >= f.valid_from
          and (f.valid_to is null or p.transaction_on <= f.valid_to)
        where p.status = 'SUCCESSFUL' and p.fee_cents is not null
        order by p.transaction_id, f.valid_from desc
      ) x
      where x.fee_cents <> x.expected_fee
      on conflict do nothing`,
  );
}

/** Notifications ↔ provider transactions by transaction id, and the notification findings. */
export async function notificationFindings(ctx: RuleContext): Promise<number> {
  await exec(
    ctx,
    sql`delete from notification_matches where kind = 'transaction' and target_id in (select transaction_id from scope_p)`,
  );
  // The latest distinct body speaks for the transaction; lateness uses the earliest receipt of any body.
  await exec(
    ctx,
    sql`insert into notification_matches (notification_id, kind, target_id, first_received_at, rule, run_id)
      select distinct on (n.transaction_id) n.notification_id, 'transaction', n.transaction_id,
        min(n.received_at) over (partition by n.transaction_id), 'transaction_id', ${ctx.runId}::bigint
      from notifications n join scope_p s on s.transaction_id = n.transaction_id
      where n.kind = 'transaction'
      order by n.transaction_id, n.received_at desc, n.notification_id desc
      on conflict do nothing`,
  );
  const base = sql`from provider_transactions p join scope_p using (transaction_id)
      left join notification_matches m on m.kind = 'transaction' and m.target_id = p.transaction_id
      left join notifications n on n.notification_id = m.notification_id`;
  // Notification checks apply to final report rows with a documented delivery status (C, S, I).
  await exec(
    ctx,
    sql`insert into findings
      select case when p.notify_status = 'C' then 'notification_missing:' else 'notification_undelivered:' end || p.transaction_id,
        case when p.notify_status = 'C' then 'notification_missing' else 'notification_undelivered' end,
        'report_notify_status', p.transaction_id, p.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('notify_status', p.notify_status, 'status', p.status),
        null, null, null, null, jsonb_build_object('notifications', jsonb_build_array())
      ${base}
      where m.notification_id is null and p.notify_status in ('C','S','I') and p.status is distinct from 'PENDING'
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'notification_late:' || p.transaction_id, 'notification_late', 'notification_delay', p.transaction_id,
        p.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('transaction_at', p.transaction_at, 'within_seconds', ${ctx.settings.notificationLateAfterSeconds}::int),
        jsonb_build_object('first_received_at', m.first_received_at,
          'delay_seconds', floor(extract(epoch from (m.first_received_at - p.transaction_at)))::bigint),
        null, null, null, jsonb_build_object('notifications', jsonb_build_array(m.notification_id))
      ${base}
      where m.notification_id is not null and p.transaction_at is not null
        and m.first_received_at > p.transaction_at + make_interval(secs => ${ctx.settings.notificationLateAfterSeconds}::int)
      on conflict do nothing`,
  );
  const differs = (a: string, b: string) => `(${a} is not null and ${b} is not null and ${a} <> ${b})`;
  const amountDiffers = differs('n.amount_cents', 'p.amount_cents');
  const currencyDiffers = differs('n.currency', 'p.currency');
  const typeDiffers = differs('n.transaction_type', 'p.transaction_type');
  const mtidDiffers = differs('n.merchant_transaction_id', 'p.merchant_transaction_id');
  const statusDiffers = differs(STATUS_CLASS('n.status'), STATUS_CLASS('p.status'));
  const field = (cond: string, name: string, side: string) =>
    `case when ${cond} then jsonb_build_object('${name}', ${side}.${name}) else '{}'::jsonb end`;
  const fields = (side: string) =>
    [
      field(amountDiffers, 'amount_cents', side),
      field(currencyDiffers, 'currency', side),
      field(typeDiffers, 'transaction_type', side),
      field(statusDiffers, 'status', side),
      field(mtidDiffers, 'merchant_transaction_id', side),
    ].join(' || ');
  await exec(
    ctx,
    sql`insert into findings
      select 'notification_mismatch:' || p.transaction_id, 'notification_mismatch', 'notification_vs_report', p.transaction_id,
        p.merchant_transaction_id, null, p.transaction_on, p.currency,
        ${sql.raw(fields('p'))}, ${sql.raw(fields('n'))},
        case when ${sql.raw(amountDiffers)} then p.amount_cents end,
        case when ${sql.raw(amountDiffers)} then n.amount_cents end,
        case when ${sql.raw(amountDiffers)} then n.amount_cents - p.amount_cents end,
        jsonb_build_object('notifications', jsonb_build_array(m.notification_id))
      ${base}
      where m.notification_id is not null and (${sql.raw([amountDiffers, currencyDiffers, typeDiffers, statusDiffers, mtidDiffers].join(' or '))})
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'fee_mismatch:fee_vs_notification:' || p.transaction_id, 'fee_mismatch', 'fee_vs_notification', p.transaction_id,
        p.merchant_transaction_id, null, p.transaction_on, p.currency,
        jsonb_build_object('fee_cents', p.fee_cents), jsonb_build_object('fee_cents', n.fee_cents),
        p.fee_cents, n.fee_cents, n.fee_cents - p.fee_cents,
        jsonb_build_object('notifications', jsonb_build_array(m.notification_id))
      ${base}
      where m.notification_id is not null and ${sql.raw(differs('n.fee_cents', 'p.fee_cents'))}
      on conflict do nothing`,
  );
  const count = await sql<{ n: number }>`select count(*)::int as n from notification_matches m
      join scope_p s on m.kind = 'transaction' and s.transaction_id = m.target_id`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}

/** Returns ↔ original transaction and ↔ ledger RETURN entries, and the return findings. */
export async function returnFindings(ctx: RuleContext): Promise<number> {
  const { from, to, dueDates } = ctx;
  await exec(
    ctx,
    sql`create temp table scope_r on commit drop as
      select return_transaction_id from provider_returns where returned_on between ${from}::date and ${to}::date`,
  );
  await exec(
    ctx,
    sql`delete from return_matches where return_transaction_id in (select return_transaction_id from scope_r)`,
  );
  // A ledger RETURN entry is found by the return transaction id first, else by the merchant
  // transaction id of the original; each entry is claimed once (UNIQUE), agreeing amounts first.
  await exec(
    ctx,
    sql`create temp table return_candidates on commit drop as
      select r.return_transaction_id, c.ledger_mtid, c.rule, c.priority,
        row_number() over (partition by c.ledger_mtid
          order by c.priority, (c.amount_cents = r.amount_cents) desc, r.return_transaction_id) as claim
      from provider_returns r join scope_r using (return_transaction_id)
      left join provider_transactions o on o.transaction_id = r.original_transaction_id
      join lateral (
        select l.merchant_transaction_id as ledger_mtid, 'return_transaction_id' as rule, 1 as priority, l.amount_cents
        from merchant_ledger l where l.transaction_type = 'RETURN' and l.transaction_id = r.return_transaction_id
        union all
        select l.merchant_transaction_id, 'original_merchant_transaction_id', 2, l.amount_cents
        from merchant_ledger l where l.transaction_type = 'RETURN'
          and l.original_merchant_transaction_id = coalesce(r.merchant_transaction_id, o.merchant_transaction_id)
          and (l.transaction_id is null or l.transaction_id = r.return_transaction_id)
      ) c on true`,
  );
  await exec(
    ctx,
    sql`insert into return_matches (return_transaction_id, original_transaction_id, ledger_merchant_transaction_id, rule, run_id)
      select r.return_transaction_id, o.transaction_id, c.ledger_mtid, coalesce(c.rule, 'original_transaction_id'),
        ${ctx.runId}::bigint
      from provider_returns r join scope_r using (return_transaction_id)
      left join provider_transactions o on o.transaction_id = r.original_transaction_id
      left join lateral (
        select rc.ledger_mtid, rc.rule from return_candidates rc
        where rc.return_transaction_id = r.return_transaction_id and rc.claim = 1
        order by rc.priority, rc.ledger_mtid limit 1
      ) c on true
      on conflict do nothing`,
  );
  const returned = sql`from return_matches m join scope_r using (return_transaction_id)
      join provider_returns r using (return_transaction_id)`;
  await exec(
    ctx,
    sql`insert into findings
      select 'return_not_booked:' || r.return_transaction_id, 'return_not_booked', 'return_vs_ledger', r.original_transaction_id,
        r.merchant_transaction_id, r.return_transaction_id, r.returned_on, r.currency,
        jsonb_build_object('return_transaction_id', r.return_transaction_id, 'original_transaction_id', r.original_transaction_id,
          'amount_cents', r.amount_cents, 'currency', r.currency, 'return_code', r.return_code, 'returned_on', r.returned_on),
        null, r.amount_cents, null, null,
        jsonb_build_object('ledger', jsonb_build_array(), 'original', jsonb_build_array(m.original_transaction_id))
      ${returned}
      where m.ledger_merchant_transaction_id is null and r.returned_on = any(${dueDates}::date[])
      on conflict do nothing`,
  );
  const booked = sql`${returned} join merchant_ledger l on l.merchant_transaction_id = m.ledger_merchant_transaction_id`;
  const cands = sql`jsonb_build_object('ledger', jsonb_build_array(l.merchant_transaction_id), 'original', jsonb_build_array(m.original_transaction_id))`;
  await exec(
    ctx,
    sql`insert into findings
      select 'amount_mismatch:return:' || r.return_transaction_id, 'amount_mismatch', 'return_vs_ledger', r.original_transaction_id,
        l.merchant_transaction_id, r.return_transaction_id, r.returned_on, r.currency,
        jsonb_build_object('amount_cents', r.amount_cents), jsonb_build_object('amount_cents', l.amount_cents),
        r.amount_cents, l.amount_cents, l.amount_cents - r.amount_cents, ${cands}
      ${booked} where l.amount_cents <> r.amount_cents
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'currency_mismatch:return:' || r.return_transaction_id, 'currency_mismatch', 'return_vs_ledger', r.original_transaction_id,
        l.merchant_transaction_id, r.return_transaction_id, r.returned_on, r.currency,
        jsonb_build_object('currency', r.currency), jsonb_build_object('currency', l.currency),
        r.amount_cents, l.amount_cents, l.amount_cents - r.amount_cents, ${cands}
      ${booked} where l.currency <> r.currency
      on conflict do nothing`,
  );
  // A booked RETURN the provider never reported, once the grace period has run out.
  await exec(
    ctx,
    sql`insert into findings
      select 'missing_at_provider:' || l.merchant_transaction_id, 'missing_at_provider', 'ledger_return_vs_provider', l.transaction_id,
        l.merchant_transaction_id, l.transaction_id, s.booked_on, l.currency,
        jsonb_build_object('merchant_transaction_id', l.merchant_transaction_id, 'transaction_type', l.transaction_type,
          'original_merchant_transaction_id', l.original_merchant_transaction_id, 'amount_cents', l.amount_cents,
          'currency', l.currency, 'booked_at', l.booked_at),
        null, l.amount_cents, null, null,
        jsonb_build_object('ledger', jsonb_build_array(l.merchant_transaction_id), 'provider', jsonb_build_array())
      from scope_l s join merchant_ledger l using (merchant_transaction_id)
      where l.transaction_type = 'RETURN' and s.booked_on = any(${dueDates}::date[])
        and not exists (select 1 from provider_returns r where r.return_transaction_id = l.transaction_id)
        and not exists (select 1 from return_matches m where m.ledger_merchant_transaction_id = l.merchant_transaction_id)
        and not exists (
          select 1 from provider_returns r left join provider_transactions o on o.transaction_id = r.original_transaction_id
          where l.transaction_id is null
            and coalesce(r.merchant_transaction_id, o.merchant_transaction_id) = l.original_merchant_transaction_id)
      on conflict do nothing`,
  );
  const count = await sql<{
    n: number;
  }>`select count(*)::int as n from return_matches m join scope_r using (return_transaction_id)
      where m.ledger_merchant_transaction_id is not null`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}

/** JSON report rows ↔ legacy rows of the same transaction id: any disagreement is a source_conflict. */
export async function sourceFindings(ctx: RuleContext): Promise<number> {
  await exec(
    ctx,
    sql`delete from source_matches where transaction_id in (select transaction_id from scope_p)`,
  );
  await exec(
    ctx,
    sql`insert into source_matches (transaction_id, legacy_transaction_id, run_id)
      select p.transaction_id, g.transaction_id, ${ctx.runId}::bigint
      from provider_transactions p join scope_p using (transaction_id)
      join legacy_transactions g on g.transaction_id = p.transaction_id
      where p.source = 'report-transactions'
      on conflict do nothing`,
  );
  const differs = (a: string, b: string) => `(${a} is not null and ${b} is not null and ${a} <> ${b})`;
  const checks: [string, string, string][] = [
    [differs('g.amount_cents', 'p.amount_cents'), 'amount_cents', 'amount_cents'],
    [differs('g.currency', 'p.currency'), 'currency', 'currency'],
    [differs(STATUS_CLASS('g.status'), STATUS_CLASS('p.status')), 'status', 'status'],
    [differs('g.fee_cents', 'p.fee_cents'), 'fee_cents', 'fee_cents'],
    [
      differs('g.merchant_transaction_id', 'p.merchant_transaction_id'),
      'merchant_transaction_id',
      'merchant_transaction_id',
    ],
  ];
  const fields = (side: string) =>
    checks
      .map(
        ([cond, name]) =>
          `case when ${cond} then jsonb_build_object('${name}', ${side}.${name}) else '{}'::jsonb end`,
      )
      .join(' || ');
  const amountDiffers = checks[0]![0];
  await exec(
    ctx,
    sql`insert into findings
      select 'source_conflict:' || p.transaction_id, 'source_conflict', 'report_vs_legacy', p.transaction_id,
        p.merchant_transaction_id, null, p.transaction_on, p.currency,
        ${sql.raw(fields('p'))}, ${sql.raw(fields('g'))},
        case when ${sql.raw(amountDiffers)} then p.amount_cents end,
        case when ${sql.raw(amountDiffers)} then g.amount_cents end,
        case when ${sql.raw(amountDiffers)} then g.amount_cents - p.amount_cents end,
        jsonb_build_object('legacy', jsonb_build_array(g.transaction_id))
      from source_matches s join scope_p using (transaction_id)
      join provider_transactions p using (transaction_id)
      join legacy_transactions g on g.transaction_id = s.legacy_transaction_id
      where ${sql.raw(checks.map(([cond]) => cond).join(' or '))}
      on conflict do nothing`,
  );
  const count = await sql<{
    n: number;
  }>`select count(*)::int as n from source_matches join scope_p using (transaction_id)`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}
