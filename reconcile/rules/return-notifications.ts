import { sql } from 'kysely';
import { aboutReturn, columnsOf, returnEvidence } from './finding-shapes.ts';
import type { Rule } from './rule.ts';
import { exec, type RuleContext } from './statement.ts';

/**
 * Return notifications against the provider's return reports, and representments against the
 * re-debit that should follow them. A return notification (kind 'return') names the return by its
 * transaction id: the return transaction id, or, from a sender that names the returned payment, the
 * original transaction id (the interface does not show which: both are accepted).
 */

/**
 * Claims of the range's returns in notification_matches (kind 'return'): the latest return
 * notification naming the return's own id, else its original's. Rewritten for the range's returns
 * (a handful per day), as return_matches is.
 */
export async function claimReturnNotifications(ctx: RuleContext): Promise<number> {
  await exec(
    ctx,
    sql`delete from notification_matches m where m.kind = 'return'
      and m.target_id in (select return_transaction_id from scope_r)`,
  );
  await exec(
    ctx,
    sql`insert into notification_matches (notification_id, kind, target_id, first_received_at, rule, run_id)
      select n.notification_id, 'return', r.return_transaction_id, n.first_received_at, n.rule, ${ctx.runId}::bigint
      from scope_r s join provider_returns r using (return_transaction_id)
      join lateral (
        select n.notification_id, n.rule,
          min(n.received_at) over () as first_received_at
        from (select n.notification_id, n.received_at, 'return_transaction_id' as rule, 1 as priority
              from notifications n where n.kind = 'return' and n.transaction_id = r.return_transaction_id
              union all
              select n.notification_id, n.received_at, 'original_transaction_id', 2
              from notifications n where n.kind = 'return' and n.transaction_id = r.original_transaction_id) n
        order by n.priority, n.received_at desc, n.notification_id desc limit 1
      ) n on true
      on conflict do nothing`,
  );
  const count = await sql<{ n: number }>`select count(*)::int as n from notification_matches m
    join scope_r s on s.return_transaction_id = m.target_id where m.kind = 'return'`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}

/** return_notification_missing: a reported return no return notification announced, after the grace period. */
export const returnNotificationMissing: Rule = {
  name: 'return_notification_missing',
  rule: 'return_report_vs_notification',
  kinds: ['return_notification_missing'],
  reads: {
    from: () => `scope_r s join provider_returns r using (return_transaction_id)
      left join notification_matches nm on nm.kind = 'return' and nm.target_id = r.return_transaction_id`,
    anchor: 'return',
  },
  // Returns of the report API only: its records say how their notification went (C, S, I); the legacy
  // e-transfer product does not notify, and its returns carry no delivery status.
  when: (ctx) => sql`nm.notification_id is null and r.notify_status is not null
    and r.returned_on <= ${ctx.dueThrough}::date`,
  select: () => ({
    ...aboutReturn('return_notification_missing'),
    expected: returnEvidence(`'notify_status', r.notify_status`),
    expected_amount_cents: 'r.amount_cents',
    candidates: `jsonb_build_object('notifications', jsonb_build_array())`,
  }),
};

/**
 * The return notifications of the scope (scope_n, reconcile/rules/returns-scope.ts) received on the
 * range's Eastern dates, one per transaction id named: the earliest of every return notification
 * naming it, when that one was received on the range's dates (a return announced twice is one
 * return, announced on its first day). The earliest of the range's alone made the discrepancy of a
 * return announced on two days depend on the range: a range holding only the second announcement
 * moved it to that day and back again at the next run of the other range
 * (test/integration/return-notified-twice.test.ts).
 */
const RECEIVED_RETURNS = () => sql`(
  select distinct on (n.transaction_id) n.notification_id, n.transaction_id, n.merchant_transaction_id,
    n.amount_cents, n.currency, n.raw_status, n.return_code, n.raw_next_action_date, n.received_at,
    (n.received_at at time zone 'America/Toronto')::date as received_on
  from scope_n s join notifications n using (notification_id)
  where not exists (select 1 from notifications o where o.kind = 'return' and o.transaction_id = n.transaction_id
    and (o.received_at, o.notification_id) < (n.received_at, n.notification_id))
  order by n.transaction_id, n.received_at, n.notification_id) n`;

/** return_not_reported: a return notification no return report lists, after the grace period. */
export const returnNotReported: Rule = {
  name: 'return_not_reported',
  rule: 'return_notification_vs_report',
  kinds: ['return_not_reported'],
  reads: { from: RECEIVED_RETURNS, anchor: 'notified' },
  when: (ctx) => sql`n.received_on <= ${ctx.dueThrough}::date
    and not exists (select 1 from provider_returns r where r.return_transaction_id = n.transaction_id)
    and not exists (select 1 from provider_returns r where r.original_transaction_id = n.transaction_id)`,
  select: () => ({
    discrepancy_key: `'return_not_reported:' || n.transaction_id`,
    ...columnsOf('n', 'n.received_on'),
    // The transaction the notification names is the return.
    return_transaction_id: 'n.transaction_id',
    actual: `jsonb_build_object('transaction_id', n.transaction_id, 'status', n.raw_status, 'amount_cents', n.amount_cents,
      'currency', n.currency, 'return_code', n.return_code, 'next_action_date', n.raw_next_action_date,
      'received_at', n.received_at)`,
    actual_amount_cents: 'n.amount_cents',
    candidates: `jsonb_build_object('notifications', jsonb_build_array(n.notification_id),
      'ledger', coalesce((select jsonb_agg(l.merchant_transaction_id order by l.merchant_transaction_id)
        from merchant_ledger l where l.transaction_type = 'RETURN' and l.transaction_id = n.transaction_id), '[]'::jsonb))`,
  }),
};

/**
 * The returns whose next action date is in the range and that the provider said are
 * RETURNED_WITH_REPRESENTMENT (in their return notification, or a status lookup of the return or of
 * its original): the provider means to debit the payment again on that date.
 */
const REPRESENTMENTS = () => sql`(
  select r.return_transaction_id, r.original_transaction_id, r.amount_cents, r.currency, r.returned_on,
    r.next_action_date, coalesce(r.merchant_transaction_id, o.merchant_transaction_id) as mtid,
    n.notification_id, sl.lookup_id
  from provider_returns r
  left join provider_transactions o on o.transaction_id = r.original_transaction_id
  left join notification_matches nm on nm.kind = 'return' and nm.target_id = r.return_transaction_id
  left join notifications n on n.notification_id = nm.notification_id
    and upper(n.raw_status) = 'RETURNED_WITH_REPRESENTMENT'
  left join lateral (select s.lookup_id from status_lookups s
    where s.transaction_id in (r.return_transaction_id, r.original_transaction_id)
      and upper(s.raw_status) = 'RETURNED_WITH_REPRESENTMENT'
    order by s.looked_up_at desc limit 1) sl on true
  where r.return_transaction_id in (select return_transaction_id from scope_x)
    and (n.notification_id is not null or sl.lookup_id is not null)) x`;

/**
 * The re-debit of a representment: another provider transaction of the returned payment's merchant
 * transaction id, dated on or after the return (the interface shows no other link between them).
 */
export const RE_DEBIT_OF = (x: string) => `exists (select 1 from provider_transactions p
  where p.merchant_transaction_id = ${x}.mtid and p.transaction_id is distinct from ${x}.original_transaction_id
    and p.transaction_on >= ${x}.returned_on)`;

/** representment_missed: the next action date of a representment passed without the re-debit. */
export const representmentMissed: Rule = {
  name: 'representment_missed',
  rule: 'representment_vs_report',
  kinds: ['representment_missed'],
  reads: { from: REPRESENTMENTS, anchor: 'representment' },
  when: (ctx) => sql`x.next_action_date <= ${ctx.dueThrough}::date and not ${sql.raw(RE_DEBIT_OF('x'))}`,
  select: () => ({
    discrepancy_key: `'representment_missed:' || x.return_transaction_id`,
    transaction_id: 'x.original_transaction_id',
    merchant_transaction_id: 'x.mtid',
    return_transaction_id: 'x.return_transaction_id',
    business_date: 'x.next_action_date',
    currency: 'x.currency',
    expected: `jsonb_build_object('return_transaction_id', x.return_transaction_id, 'original_transaction_id',
      x.original_transaction_id, 'merchant_transaction_id', x.mtid, 'next_action_date', x.next_action_date,
      'amount_cents', x.amount_cents, 'currency', x.currency)`,
    expected_amount_cents: 'x.amount_cents',
    candidates: `jsonb_build_object('notifications', case when x.notification_id is null then '[]'::jsonb
      else jsonb_build_array(x.notification_id) end, 'status_lookups', case when x.lookup_id is null then '[]'::jsonb
      else jsonb_build_array(x.lookup_id) end, 'provider', jsonb_build_array())`,
  }),
};

export const RETURN_NOTIFICATION_RULES: readonly Rule[] = [
  returnNotificationMissing,
  returnNotReported,
  representmentMissed,
];
