import { sql } from 'kysely';
import type { Rule } from './rule.ts';
import { aboutTransaction, amounts, columnsOf, fieldChecksRule } from './finding-shapes.ts';
import { fieldCheck, type FieldCheck, statusCheck } from './sql-terms.ts';

/**
 * Provider transactions against the notification that speaks for them (the latest distinct body,
 * claimed in claims.ts: f.notification_id and the f.n_* columns).
 */

const notificationOnly = `jsonb_build_object('notifications', jsonb_build_array(f.notification_id))`;

/** The meaning of each transactionNotifyStatus value (docs/provider-interface.md: C, S, I). */
const NOTIFY_STATUS_MEANS = `case f.notify_status when 'C' then 'completed' when 'S' then 'sent' when 'I' then 'not sent' end`;

/**
 * The latest delivery of this transaction that the receiver quarantined (refused for its content)
 * and that no replay has taken in yet: its body names the transaction (notification_quarantine.transaction_id).
 * The latest of each transaction is chosen once (distinct on) and joined by id, which the planner
 * may hash, rather than asked of each suspect (a lateral subquery): a first run's 25,000 suspects at
 * 1,000,000 rows each scanned and sorted the quarantine again (docs/benchmark-record.md §2). The
 * deliveries not yet replayed are few: the receiver quarantines a body only when its content is
 * refused.
 */
const QUARANTINED = `left join (select distinct on (q.transaction_id) q.transaction_id, q.quarantine_id, q.reason,
      q.received_at, q.delivery_count
    from notification_quarantine q
    where q.transaction_id is not null and q.kind = 'transaction' and q.replayed_at is null
    order by q.transaction_id, q.last_received_at desc, q.quarantine_id desc) q on q.transaction_id = f.transaction_id`;

/**
 * A final report row whose notification the receiver does not hold, named by what the report says
 * of the delivery (transactionNotifyStatus) and what the receiver has:
 * - notification_quarantined: a delivery arrived and was refused for its content; it is named, with
 *   its reason (`recon notifications replay` takes it in once the cause is fixed);
 * - notification_missing: the provider says it sent the notification (S sent, C completed) and the
 *   receiver holds none: the merchant's side to investigate;
 * - notification_undelivered: the provider says it has not sent it (I not sent).
 * The checks apply to rows of the JSON report, whose delivery status is documented. A legacy-only
 * row's notify_status is the legacy CSV's field 12, whose meaning is not documented, and the legacy
 * e-transfer product does not notify: checking it would flag every such row.
 */
export const notificationMissing: Rule = {
  name: 'notification_missing',
  rule: 'report_notify_status',
  kinds: ['notification_missing', 'notification_undelivered', 'notification_quarantined'],
  reads: { suspects: true, join: QUARANTINED },
  when: () => `f.notification_id is null and f.notify_status in ('C','S','I') and f.status is distinct from 'PENDING'
    and f.source = 'report-transactions'`,
  select: () => {
    const kind = `case when q.quarantine_id is not null then 'notification_quarantined'
      when f.notify_status = 'I' then 'notification_undelivered' else 'notification_missing' end`;
    return {
      discrepancy_key: `${kind} || ':' || f.transaction_id`,
      kind,
      ...columnsOf('f', 'f.transaction_on'),
      expected: `jsonb_build_object('notify_status', f.notify_status, 'notify_status_means', ${NOTIFY_STATUS_MEANS}, 'status', f.status)`,
      actual: `case when q.quarantine_id is not null then jsonb_build_object('quarantine_id', q.quarantine_id,
        'reason', q.reason, 'received_at', q.received_at, 'deliveries', q.delivery_count) end`,
      candidates: `jsonb_build_object('notifications', jsonb_build_array(),
        'quarantine', case when q.quarantine_id is null then jsonb_build_array() else jsonb_build_array(q.quarantine_id) end)`,
    };
  },
};

/**
 * notification_contradiction: the notification history of a transaction says both that it succeeded
 * and that it failed (FAILED then SUCCESS, or the reverse), whichever arrived last: the latest body
 * alone cannot be trusted for the outcome.
 */
export const notificationContradiction: Rule = {
  name: 'notification_contradiction',
  rule: 'notification_history',
  kinds: ['notification_contradiction'],
  reads: { suspects: true },
  when: () => 'f.n_contradicts',
  select: () => ({
    ...aboutTransaction('notification_contradiction'),
    expected: `jsonb_build_object('status', f.status, 'raw_status', f.raw_status)`,
    actual: `jsonb_build_object('notifications', (select jsonb_agg(jsonb_build_object('notification_id', n.notification_id,
      'status', n.status, 'received_at', n.received_at) order by n.received_at, n.notification_id)
      from notifications n where n.kind = 'transaction' and n.transaction_id = f.transaction_id))`,
    expected_amount_cents: 'f.amount_cents',
    candidates: `jsonb_build_object('notifications', (select jsonb_agg(n.notification_id order by n.received_at, n.notification_id)
      from notifications n where n.kind = 'transaction' and n.transaction_id = f.transaction_id))`,
  }),
};

/**
 * notification_mismatch, once the grace period has run out: a final notification for a transaction
 * the provider's report still says is PENDING (the report and the notification cannot both be right).
 */
export const notificationAheadOfReport: Rule = {
  name: 'notification_ahead_of_report',
  rule: 'notification_vs_pending_report',
  kinds: ['notification_mismatch'],
  reads: { suspects: true },
  when: (ctx) => sql`f.notification_id is not null and f.status = 'PENDING' and f.n_status is not null
    and f.n_status <> 'PENDING' and f.transaction_on <= ${ctx.dueThrough}::date`,
  select: () => ({
    ...aboutTransaction('notification_mismatch:pending'),
    expected: `jsonb_build_object('status', f.status, 'raw_status', f.raw_status)`,
    actual: `jsonb_build_object('status', f.n_status)`,
    expected_amount_cents: 'f.amount_cents',
    candidates: notificationOnly,
  }),
};

/** notification_late: the first body arrived later than the configured delay after the transaction. */
export const notificationLate: Rule = {
  name: 'notification_late',
  rule: 'notification_delay',
  kinds: ['notification_late'],
  reads: { suspects: true },
  when: (ctx) => sql`f.notification_id is not null and f.transaction_at is not null
    and f.first_received_at > f.transaction_at + make_interval(secs => ${ctx.settings.notificationLateAfterSeconds}::int)`,
  select: (ctx) => ({
    ...aboutTransaction('notification_late'),
    expected: sql`jsonb_build_object('transaction_at', f.transaction_at, 'within_seconds', ${ctx.settings.notificationLateAfterSeconds}::int)`,
    actual: `jsonb_build_object('first_received_at', f.first_received_at,
      'delay_seconds', floor(extract(epoch from (f.first_received_at - f.transaction_at)))::bigint)`,
    candidates: notificationOnly,
  }),
};

const NOTIFICATION_CHECKS: readonly FieldCheck[] = [
  fieldCheck('amount_cents', 'n_amount'),
  fieldCheck('currency', 'n_currency'),
  fieldCheck('transaction_type', 'n_type'),
  statusCheck('status', 'n_status'),
  fieldCheck('merchant_transaction_id', 'n_mtid'),
];

/** notification_mismatch: the notification says something else than the report. */
export const notificationMismatch: Rule = fieldChecksRule({
  rule: 'notification_vs_report',
  kind: 'notification_mismatch',
  present: 'f.notification_id is not null',
  checks: NOTIFICATION_CHECKS,
  candidates: notificationOnly,
});

const feeCheck = fieldCheck('fee_cents', 'n_fee');

/** fee_mismatch between the notification and the report. */
export const feeVsNotification: Rule = {
  name: 'fee_vs_notification',
  rule: 'fee_vs_notification',
  kinds: ['fee_mismatch'],
  reads: { suspects: true },
  when: () => `f.notification_id is not null and ${feeCheck.condition}`,
  select: () => ({
    ...aboutTransaction('fee_mismatch:fee_vs_notification'),
    expected: `jsonb_build_object('fee_cents', f.fee_cents)`,
    actual: `jsonb_build_object('fee_cents', f.n_fee)`,
    ...amounts('f.fee_cents', 'f.n_fee'),
    candidates: notificationOnly,
  }),
};

export const NOTIFICATION_RULES: readonly Rule[] = [
  notificationMissing,
  notificationLate,
  notificationMismatch,
  feeVsNotification,
  notificationContradiction,
  notificationAheadOfReport,
];
