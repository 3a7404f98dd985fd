import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../../db/database.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import type { ReconcileSettings } from '../settings.ts';

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
  /**
   * The last Eastern date whose grace period has run out at asOf (YYYY-MM-DD): dates of the range up
   * to it are due. (A list of due dates made the run quadratic in the length of the range.)
   */
  readonly dueThrough: string;
}

const STATUS_CLASS = (col: string) =>
  `(case when ${col} in ('SUCCESSFUL','RETURNED') then 'ok' when ${col} in ('REJECTED','FAILED') then 'failed' end)`;

const PROFILE_STATEMENTS = PROFILE === '1' || PROFILE === 'explain';

async function exec(ctx: RuleContext, query: RawBuilder<unknown>): Promise<number> {
  return execStatement(ctx.trx, query);
}

/**
 * Runs one statement of a run. RECON_PROFILE=1 prints its time; RECON_PROFILE=explain runs it as
 * `explain (analyze, buffers)` instead (which executes it too, so the run goes on unchanged) and
 * prints the plan: the buffers of each node show what the statement read.
 */
export async function execStatement(trx: Transaction<Database>, query: RawBuilder<unknown>): Promise<number> {
  const t0 = PROFILE_STATEMENTS ? performance.now() : 0;
  const compiled = query.compile(trx);
  if (
    PROFILE === 'explain' &&
    /^\s*(select|insert|update|delete|with|create temp table \w+ on commit drop as)\b/i.test(compiled.sql)
  ) {
    const plan = await trx.executeQuery<{ 'QUERY PLAN': string }>({
      ...compiled,
      sql: `explain (analyze, buffers, costs off, timing off) ${compiled.sql}`,
    });
    writeProfileLine(t0, compiled.sql.replace(/\s+/g, ' ').slice(0, 160));
    process.stderr.write(`${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
    return 0;
  }
  const result = await query.execute(trx);
  if (PROFILE_STATEMENTS) {
    writeProfileLine(t0, compiled.sql.replace(/\s+/g, ' ').slice(0, 90));
  }
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
      select transaction_id, merchant_transaction_id as mtid from provider_transactions
      where transaction_on between ${from}::date and ${to}::date`,
  );
  // Ledger entries booked on an Eastern date of the range (for missing_at_provider).
  await exec(
    ctx,
    sql`create temp table scope_l on commit drop as
      select merchant_transaction_id, transaction_type, (booked_at at time zone 'America/Toronto')::date as booked_on
      from merchant_ledger
      where booked_at >= (${from}::date)::timestamp at time zone 'America/Toronto'
        and booked_at < ((${to}::date + 1))::timestamp at time zone 'America/Toronto'`,
  );
  await exec(ctx, sql`analyze scope_p, scope_l`);
  // Merchant transaction ids of the range that more than one provider row carries (in any range).
  await exec(
    ctx,
    sql`create temp table dup_m on commit drop as
      select p.merchant_transaction_id as mtid from provider_transactions p
      where p.merchant_transaction_id in (select mtid from scope_p)
      group by p.merchant_transaction_id having count(*) > 1`,
  );
  // Rank every provider row of those ids: rank 1 claims the ledger entry, the others are duplicates.
  // Ids with a single provider row are rank 1 without ranking (most of them: no sort of the range).
  await exec(
    ctx,
    sql`create temp table ranked on commit drop as
      select p.transaction_id, p.merchant_transaction_id as mtid, row_number() over w as rank
      from provider_transactions p
      join dup_m m on m.mtid = p.merchant_transaction_id
      left join merchant_ledger l on l.merchant_transaction_id = p.merchant_transaction_id
      window w as (partition by p.merchant_transaction_id order by
        (l.merchant_transaction_id is not null and p.amount_cents = l.amount_cents and p.currency = l.currency
          and p.transaction_type is not distinct from l.transaction_type) desc,
        (p.status = 'SUCCESSFUL') desc, p.transaction_at nulls last, p.transaction_id)`,
  );
  await exec(ctx, sql`analyze dup_m, ranked`);
}

/**
 * Claims: provider transactions ↔ ledger (rank 1 of each merchant transaction id), notifications ↔
 * provider transactions (the latest distinct body), JSON report rows ↔ legacy rows. Only what changed
 * is written, so that a re-run over unchanged data writes nothing. Returns the counts of claims.
 */
export async function matchTransactions(
  ctx: RuleContext,
): Promise<{ transactions: number; notifications: number; legacy: number }> {
  // The latest distinct body speaks for the transaction; lateness uses the earliest receipt of any body.
  await exec(
    ctx,
    sql`create temp table want_nm on commit drop as
      select distinct on (n.transaction_id) n.notification_id, n.transaction_id as target_id,
        min(n.received_at) over (partition by n.transaction_id) as first_received_at,
        n.amount_cents, n.currency, n.transaction_type, n.status, n.merchant_transaction_id, n.fee_cents
      from notifications n join scope_p s on s.transaction_id = n.transaction_id
      where n.kind = 'transaction'
      order by n.transaction_id, n.received_at desc, n.notification_id desc`,
  );
  await exec(ctx, sql`analyze want_nm`);
  await exec(
    ctx,
    sql`delete from notification_matches m
      where m.kind = 'transaction' and m.target_id in (select transaction_id from scope_p)
        and not exists (select 1 from want_nm w where w.notification_id = m.notification_id
                        and w.target_id = m.target_id and w.first_received_at = m.first_received_at)`,
  );
  await exec(
    ctx,
    sql`create temp table new_nm on commit drop as
      select w.notification_id, w.target_id, w.first_received_at from want_nm w
      where not exists (select 1 from notification_matches m where m.notification_id = w.notification_id)
        and not exists (select 1 from notification_matches m where m.kind = 'transaction' and m.target_id = w.target_id)`,
  );
  // Inserted from a settled set (an anti-join against the table being filled would rescan it per row),
  // without ON CONFLICT: the set excludes what is claimed, and speculative insertion doubles the cost.
  await exec(
    ctx,
    sql`insert into notification_matches (notification_id, kind, target_id, first_received_at, rule, run_id)
      select notification_id, 'transaction', target_id, first_received_at, 'transaction_id', ${ctx.runId}::bigint
      from new_nm order by target_id`,
  );

  await exec(
    ctx,
    sql`create temp table want_sm on commit drop as
      select p.transaction_id from provider_transactions p join scope_p using (transaction_id)
      join legacy_transactions g on g.transaction_id = p.transaction_id
      where p.source = 'report-transactions'`,
  );
  await exec(ctx, sql`analyze want_sm`);
  await exec(
    ctx,
    sql`delete from source_matches m where m.transaction_id in (select transaction_id from scope_p)
      and not exists (select 1 from want_sm w where w.transaction_id = m.transaction_id)`,
  );
  await exec(
    ctx,
    sql`insert into source_matches (transaction_id, legacy_transaction_id, run_id)
      select transaction_id, transaction_id, ${ctx.runId}::bigint from want_sm
      on conflict do nothing`,
  );

  // One wide row per provider transaction of the range with everything the rules compare: each rule
  // then scans this table instead of joining the warehouse again. l_* is the ledger entry it claims.
  await exec(
    ctx,
    sql`create temp table facts on commit drop as
      select p.transaction_id, p.merchant_transaction_id, p.transaction_on, p.currency, p.amount_cents, p.fee_cents,
        p.status, p.raw_status, p.transaction_type, p.transaction_at, p.notify_status, p.product, p.source,
        coalesce(r.rank, 1) as rank,
        l.merchant_transaction_id as l_mtid, l.amount_cents as l_amount, l.currency as l_currency,
        l.transaction_type as l_type, l.status as l_status,
        w.notification_id, w.first_received_at, w.amount_cents as n_amount, w.currency as n_currency,
        w.transaction_type as n_type, w.status as n_status, w.merchant_transaction_id as n_mtid, w.fee_cents as n_fee,
        g.transaction_id as g_id, g.amount_cents as g_amount, g.currency as g_currency, g.status as g_status,
        g.fee_cents as g_fee, g.merchant_transaction_id as g_mtid
      from scope_p s join provider_transactions p using (transaction_id)
      left join ranked r using (transaction_id)
      left join merchant_ledger l on l.merchant_transaction_id = p.merchant_transaction_id and coalesce(r.rank, 1) = 1
      left join want_nm w on w.target_id = p.transaction_id
      left join want_sm sm on sm.transaction_id = p.transaction_id
      left join legacy_transactions g on g.transaction_id = sm.transaction_id`,
  );
  await exec(ctx, sql`analyze facts`);
  // The rows any rule below can flag (a superset; each rule checks its own condition): the rules
  // then read a few percent of the range instead of scanning it once each.
  const late = ctx.settings.notificationLateAfterSeconds;
  const ne = (a: string, b: string) => `(${a} is not null and ${b} is not null and ${a} <> ${b})`;
  await exec(
    ctx,
    sql`create temp table suspects on commit drop as
      select * from facts f
      where f.l_mtid is null or f.notification_id is null or f.g_id is not null
        or f.amount_cents <> f.l_amount or f.currency <> f.l_currency or f.transaction_type <> f.l_type
        or ${sql.raw(STATUS_CLASS('f.status'))} is distinct from ${sql.raw(STATUS_CLASS('f.l_status'))}
        or f.first_received_at > f.transaction_at + make_interval(secs => ${late}::int)
        or ${sql.raw(
          [
            ne('f.n_amount', 'f.amount_cents'),
            ne('f.n_currency', 'f.currency'),
            ne('f.n_type', 'f.transaction_type'),
            ne(STATUS_CLASS('f.n_status'), STATUS_CLASS('f.status')),
            ne('f.n_mtid', 'f.merchant_transaction_id'),
            ne('f.n_fee', 'f.fee_cents'),
          ].join(' or '),
        )}`,
  );
  // Claims of the ledger, written only where they changed (a re-run over unchanged data writes nothing).
  await exec(
    ctx,
    sql`delete from transaction_matches tm
      where tm.transaction_id in (select transaction_id from scope_p)
        and not exists (select 1 from facts f where f.transaction_id = tm.transaction_id and f.l_mtid = tm.merchant_transaction_id)`,
  );
  await exec(
    ctx,
    sql`delete from transaction_matches tm where tm.transaction_id in (select transaction_id from ranked where rank > 1)`,
  );
  await exec(
    ctx,
    sql`create temp table new_tm on commit drop as
      select f.transaction_id, f.l_mtid from facts f
      where f.l_mtid is not null
        and not exists (select 1 from transaction_matches tm where tm.transaction_id = f.transaction_id)
        and not exists (select 1 from transaction_matches tm where tm.merchant_transaction_id = f.l_mtid)`,
  );
  await exec(
    ctx,
    sql`insert into transaction_matches (transaction_id, merchant_transaction_id, rule, run_id)
      select transaction_id, l_mtid, 'merchant_transaction_id', ${ctx.runId}::bigint from new_tm order by transaction_id`,
  );
  const counts = await sql<{ t: number; n: number; g: number }>`select
      (select count(*) from facts where l_mtid is not null)::int as t, (select count(*) from want_nm)::int as n,
      (select count(*) from want_sm)::int as g`.execute(ctx.trx);
  const row = counts.rows[0]!;
  return { transactions: row.t, notifications: row.n, legacy: row.g };
}

/** Findings about provider transactions and ledger DEBIT/CREDIT entries. */
export async function transactionFindings(ctx: RuleContext): Promise<void> {
  const { dueThrough } = ctx;
  // missing_in_ledger: money moved (or may move) and the merchant has no entry.
  await exec(
    ctx,
    sql`insert into findings
      select 'missing_in_ledger:' || f.transaction_id, 'missing_in_ledger', 'transaction_vs_ledger',
        f.transaction_id, f.merchant_transaction_id, null, f.transaction_on, f.currency,
        jsonb_build_object('transaction_id', f.transaction_id, 'merchant_transaction_id', f.merchant_transaction_id,
          'transaction_type', f.transaction_type, 'status', f.status, 'amount_cents', f.amount_cents, 'currency', f.currency),
        null, f.amount_cents, null, null,
        jsonb_build_object('ledger', jsonb_build_array(), 'provider', jsonb_build_array(f.transaction_id))
      from suspects f
      where f.rank = 1 and f.l_mtid is null
        and not exists (select 1 from merchant_ledger l where l.merchant_transaction_id = f.merchant_transaction_id)
        and (f.status is null or f.status in ('SUCCESSFUL','PENDING','RETURNED'))
      on conflict do nothing`,
  );
  // duplicate_merchant_transaction: a second provider row with a merchant transaction id already claimed.
  await exec(
    ctx,
    sql`insert into findings
      select 'duplicate_merchant_transaction:' || f.transaction_id, 'duplicate_merchant_transaction',
        'merchant_transaction_id_unique', f.transaction_id, f.merchant_transaction_id, null, f.transaction_on, f.currency,
        jsonb_build_object('transaction_id', first.transaction_id, 'merchant_transaction_id', f.merchant_transaction_id),
        jsonb_build_object('transaction_id', f.transaction_id, 'amount_cents', f.amount_cents, 'status', f.status),
        null, f.amount_cents, null,
        jsonb_build_object('provider', (select jsonb_agg(o.transaction_id order by o.rank) from ranked o where o.mtid = f.merchant_transaction_id))
      from suspects f
      join ranked first on first.mtid = f.merchant_transaction_id and first.rank = 1
      where f.rank > 1
      on conflict do nothing`,
  );
  // Field comparisons of each claimed pair, business date of the provider row.
  const pair = (kind: string, exp: string, act: string, where: string) =>
    sql`insert into findings
      select '${sql.raw(kind)}:' || f.transaction_id, '${sql.raw(kind)}', 'transaction_vs_ledger', f.transaction_id,
        f.l_mtid, null, f.transaction_on, f.currency, ${sql.raw(exp)}, ${sql.raw(act)},
        f.amount_cents, f.l_amount, f.l_amount - f.amount_cents,
        jsonb_build_object('ledger', jsonb_build_array(f.l_mtid), 'provider', jsonb_build_array(f.transaction_id))
      from suspects f where f.l_mtid is not null and ${sql.raw(where)}
      on conflict do nothing`;
  await exec(
    ctx,
    pair(
      'amount_mismatch',
      `jsonb_build_object('amount_cents', f.amount_cents)`,
      `jsonb_build_object('amount_cents', f.l_amount)`,
      'f.amount_cents <> f.l_amount',
    ),
  );
  await exec(
    ctx,
    pair(
      'currency_mismatch',
      `jsonb_build_object('currency', f.currency)`,
      `jsonb_build_object('currency', f.l_currency)`,
      'f.currency <> f.l_currency',
    ),
  );
  await exec(
    ctx,
    pair(
      'type_mismatch',
      `jsonb_build_object('transaction_type', f.transaction_type)`,
      `jsonb_build_object('transaction_type', f.l_type)`,
      'f.transaction_type is not null and f.transaction_type <> f.l_type',
    ),
  );
  await exec(
    ctx,
    pair(
      'status_mismatch',
      `jsonb_build_object('status', f.status, 'raw_status', f.raw_status)`,
      `jsonb_build_object('status', f.l_status)`,
      `${STATUS_CLASS('f.status')} <> ${STATUS_CLASS('f.l_status')}`,
    ),
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
        and s.booked_on <= ${dueThrough}::date
        and not exists (select 1 from provider_transactions p where p.merchant_transaction_id = l.merchant_transaction_id)
      on conflict do nothing`,
  );
  // fee_mismatch against the contracted schedule, for successful transactions with a reported fee.
  await exec(
    ctx,
    sql`insert into findings
      select 'fee_mismatch:fee_vs_schedule:' || x.transaction_id, 'fee_mismatch', 'fee_vs_schedule', x.transaction_id,
        x.merchant_transaction_id, null, x.transaction_on, x.currency,
        jsonb_build_object('fee_cents', x.expected_fee, 'fixed_cents', x.fixed_cents, 'basis_points', x.basis_points,
          'rounding', x.rounding, 'amount_cents', x.amount_cents),
        jsonb_build_object('fee_cents', x.fee_cents),
        x.expected_fee, x.fee_cents, x.fee_cents - x.expected_fee,
        jsonb_build_object('fee_schedule', jsonb_build_array(x.schedule_key))
      from (
        select distinct on (f.transaction_id) f.transaction_id, f.merchant_transaction_id, f.transaction_on, f.currency,
          f.amount_cents, f.fee_cents, s.fixed_cents, s.basis_points, s.rounding,
          s.fixed_cents + (f.amount_cents * s.basis_points + case when s.rounding = 'floor' then 0 else 5000 end) / 10000 as expected_fee,
          s.product || '/' || s.transaction_type || '/' || s.currency || '/' || s.valid_from as schedule_key
        from facts f
        join fee_schedule s on s.product = f.product and s.transaction_type = f.transaction_type
          and s.currency = f.currency and f.transaction_on >= s.valid_from
          and (s.valid_to is null or f.transaction_on <= s.valid_to)
        where f.status = 'SUCCESSFUL' and f.fee_cents is not null
        order by f.transaction_id, s.valid_from desc
      ) x
      where x.fee_cents <> x.expected_fee
      on conflict do nothing`,
  );
}

/** Notification findings, from the claims of matchTransactions. */
export async function notificationFindings(ctx: RuleContext): Promise<void> {
  // Notification checks apply to final rows with a documented delivery status (C, S, I): the JSON
  // report's. A legacy-only row's notify_status is the legacy CSV's field 12, whose meaning is not
  // shown, and the legacy e-transfer product does not notify: checking it would flag every such row.
  await exec(
    ctx,
    sql`insert into findings
      select case when f.notify_status = 'C' then 'notification_missing:' else 'notification_undelivered:' end || f.transaction_id,
        case when f.notify_status = 'C' then 'notification_missing' else 'notification_undelivered' end,
        'report_notify_status', f.transaction_id, f.merchant_transaction_id, null, f.transaction_on, f.currency,
        jsonb_build_object('notify_status', f.notify_status, 'status', f.status),
        null, null, null, null, jsonb_build_object('notifications', jsonb_build_array())
      from suspects f
      where f.notification_id is null and f.notify_status in ('C','S','I') and f.status is distinct from 'PENDING'
        and f.source = 'report-transactions'
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'notification_late:' || f.transaction_id, 'notification_late', 'notification_delay', f.transaction_id,
        f.merchant_transaction_id, null, f.transaction_on, f.currency,
        jsonb_build_object('transaction_at', f.transaction_at, 'within_seconds', ${ctx.settings.notificationLateAfterSeconds}::int),
        jsonb_build_object('first_received_at', f.first_received_at,
          'delay_seconds', floor(extract(epoch from (f.first_received_at - f.transaction_at)))::bigint),
        null, null, null, jsonb_build_object('notifications', jsonb_build_array(f.notification_id))
      from suspects f
      where f.notification_id is not null and f.transaction_at is not null
        and f.first_received_at > f.transaction_at + make_interval(secs => ${ctx.settings.notificationLateAfterSeconds}::int)
      on conflict do nothing`,
  );
  const differs = (a: string, b: string) => `(${a} is not null and ${b} is not null and ${a} <> ${b})`;
  const checks: [string, string, string][] = [
    [differs('f.n_amount', 'f.amount_cents'), 'amount_cents', 'n_amount'],
    [differs('f.n_currency', 'f.currency'), 'currency', 'n_currency'],
    [differs('f.n_type', 'f.transaction_type'), 'transaction_type', 'n_type'],
    [differs(STATUS_CLASS('f.n_status'), STATUS_CLASS('f.status')), 'status', 'n_status'],
    [differs('f.n_mtid', 'f.merchant_transaction_id'), 'merchant_transaction_id', 'n_mtid'],
  ];
  const fields = (side: 'report' | 'notification') =>
    checks
      .map(
        ([cond, name, ncol]) =>
          `case when ${cond} then jsonb_build_object('${name}', f.${side === 'report' ? name : ncol}) else '{}'::jsonb end`,
      )
      .join(' || ');
  const amountDiffers = checks[0]![0];
  await exec(
    ctx,
    sql`insert into findings
      select 'notification_mismatch:' || f.transaction_id, 'notification_mismatch', 'notification_vs_report', f.transaction_id,
        f.merchant_transaction_id, null, f.transaction_on, f.currency,
        ${sql.raw(fields('report'))}, ${sql.raw(fields('notification'))},
        case when ${sql.raw(amountDiffers)} then f.amount_cents end,
        case when ${sql.raw(amountDiffers)} then f.n_amount end,
        case when ${sql.raw(amountDiffers)} then f.n_amount - f.amount_cents end,
        jsonb_build_object('notifications', jsonb_build_array(f.notification_id))
      from suspects f
      where f.notification_id is not null and (${sql.raw(checks.map(([cond]) => cond).join(' or '))})
      on conflict do nothing`,
  );
  await exec(
    ctx,
    sql`insert into findings
      select 'fee_mismatch:fee_vs_notification:' || f.transaction_id, 'fee_mismatch', 'fee_vs_notification', f.transaction_id,
        f.merchant_transaction_id, null, f.transaction_on, f.currency,
        jsonb_build_object('fee_cents', f.fee_cents), jsonb_build_object('fee_cents', f.n_fee),
        f.fee_cents, f.n_fee, f.n_fee - f.fee_cents,
        jsonb_build_object('notifications', jsonb_build_array(f.notification_id))
      from suspects f
      where f.notification_id is not null and ${sql.raw(differs('f.n_fee', 'f.fee_cents'))}
      on conflict do nothing`,
  );
}

/** Returns ↔ original transaction and ↔ ledger RETURN entries, and the return findings. */
export async function returnFindings(ctx: RuleContext): Promise<number> {
  const { from, to, dueThrough } = ctx;
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
      where m.ledger_merchant_transaction_id is null and r.returned_on <= ${dueThrough}::date
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
      where s.transaction_type = 'RETURN' and s.booked_on <= ${dueThrough}::date
        and not exists (select 1 from provider_returns r where r.return_transaction_id = l.transaction_id)
        and not exists (select 1 from return_matches m where m.ledger_merchant_transaction_id = l.merchant_transaction_id)
        -- A return of the original, by its own merchant transaction id or else by its original's: two
        -- index lookups (a coalesce() of both sides read every provider return, and the ledger was
        -- scanned for RETURN entries, at every run).
        and not (l.transaction_id is null and (
          exists (select 1 from provider_returns r
                  where r.merchant_transaction_id = l.original_merchant_transaction_id)
          or exists (select 1 from provider_transactions o
                     join provider_returns r on r.original_transaction_id = o.transaction_id
                     where o.merchant_transaction_id = l.original_merchant_transaction_id
                       and r.merchant_transaction_id is null)))
      on conflict do nothing`,
  );
  const count = await sql<{
    n: number;
  }>`select count(*)::int as n from return_matches m join scope_r using (return_transaction_id)
      where m.ledger_merchant_transaction_id is not null`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}

/** JSON report rows ↔ legacy rows of the same transaction id: any disagreement is a source_conflict. */
export async function sourceFindings(ctx: RuleContext): Promise<void> {
  const differs = (a: string, b: string) => `(${a} is not null and ${b} is not null and ${a} <> ${b})`;
  const checks: [string, string, string][] = [
    [differs('f.g_amount', 'f.amount_cents'), 'amount_cents', 'g_amount'],
    [differs('f.g_currency', 'f.currency'), 'currency', 'g_currency'],
    [differs(STATUS_CLASS('f.g_status'), STATUS_CLASS('f.status')), 'status', 'g_status'],
    [differs('f.g_fee', 'f.fee_cents'), 'fee_cents', 'g_fee'],
    [differs('f.g_mtid', 'f.merchant_transaction_id'), 'merchant_transaction_id', 'g_mtid'],
  ];
  const fields = (side: 'report' | 'legacy') =>
    checks
      .map(
        ([cond, name, gcol]) =>
          `case when ${cond} then jsonb_build_object('${name}', f.${side === 'report' ? name : gcol}) else '{}'::jsonb end`,
      )
      .join(' || ');
  const amountDiffers = checks[0]![0];
  await exec(
    ctx,
    sql`insert into findings
      select 'source_conflict:' || f.transaction_id, 'source_conflict', 'report_vs_legacy', f.transaction_id,
        f.merchant_transaction_id, null, f.transaction_on, f.currency,
        ${sql.raw(fields('report'))}, ${sql.raw(fields('legacy'))},
        case when ${sql.raw(amountDiffers)} then f.amount_cents end,
        case when ${sql.raw(amountDiffers)} then f.g_amount end,
        case when ${sql.raw(amountDiffers)} then f.g_amount - f.amount_cents end,
        jsonb_build_object('legacy', jsonb_build_array(f.g_id))
      from suspects f
      where f.g_id is not null and (${sql.raw(checks.map(([cond]) => cond).join(' or '))})
      on conflict do nothing`,
  );
}
