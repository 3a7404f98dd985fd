import { sql } from 'kysely';
import type { Rule } from './rule.ts';
import { anyDiffers, differingFields, fieldCheck, type FieldCheck, statusCheck } from './sql-terms.ts';

/**
 * Provider transactions against the notification that speaks for them (the latest distinct body,
 * claimed in claims.ts: f.notification_id and the f.n_* columns).
 */

const notificationOnly = `jsonb_build_object('notifications', jsonb_build_array(f.notification_id))`;

/**
 * notification_missing / notification_undelivered. The checks apply to final rows with a
 * documented delivery status (C, S, I): the JSON report's. A legacy-only row's notify_status is the
 * legacy CSV's field 12, whose meaning is not documented, and the legacy e-transfer product does not
 * notify: checking it would flag every such row.
 */
export const notificationMissing: Rule = {
  name: 'notification_missing',
  rule: 'report_notify_status',
  kinds: ['notification_missing', 'notification_undelivered'],
  reads: { suspects: true },
  when: () => `f.notification_id is null and f.notify_status in ('C','S','I') and f.status is distinct from 'PENDING'
    and f.source = 'report-transactions'`,
  select: () => ({
    discrepancy_key: `case when f.notify_status = 'C' then 'notification_missing:' else 'notification_undelivered:' end || f.transaction_id`,
    kind: `case when f.notify_status = 'C' then 'notification_missing' else 'notification_undelivered' end`,
    transaction_id: 'f.transaction_id',
    merchant_transaction_id: 'f.merchant_transaction_id',
    business_date: 'f.transaction_on',
    currency: 'f.currency',
    expected: `jsonb_build_object('notify_status', f.notify_status, 'status', f.status)`,
    candidates: `jsonb_build_object('notifications', jsonb_build_array())`,
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
    discrepancy_key: `'notification_late:' || f.transaction_id`,
    transaction_id: 'f.transaction_id',
    merchant_transaction_id: 'f.merchant_transaction_id',
    business_date: 'f.transaction_on',
    currency: 'f.currency',
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
const amountDiffers = NOTIFICATION_CHECKS[0]!.condition;

/** notification_mismatch: the notification says something else than the report. */
export const notificationMismatch: Rule = {
  name: 'notification_mismatch',
  rule: 'notification_vs_report',
  kinds: ['notification_mismatch'],
  reads: { suspects: true },
  when: () => `f.notification_id is not null and ${anyDiffers(NOTIFICATION_CHECKS)}`,
  select: () => ({
    discrepancy_key: `'notification_mismatch:' || f.transaction_id`,
    transaction_id: 'f.transaction_id',
    merchant_transaction_id: 'f.merchant_transaction_id',
    business_date: 'f.transaction_on',
    currency: 'f.currency',
    expected: differingFields(NOTIFICATION_CHECKS, 'report'),
    actual: differingFields(NOTIFICATION_CHECKS, 'other'),
    expected_amount_cents: `case when ${amountDiffers} then f.amount_cents end`,
    actual_amount_cents: `case when ${amountDiffers} then f.n_amount end`,
    difference_cents: `case when ${amountDiffers} then f.n_amount - f.amount_cents end`,
    candidates: notificationOnly,
  }),
};

const feeCheck = fieldCheck('fee_cents', 'n_fee');

/** fee_mismatch between the notification and the report. */
export const feeVsNotification: Rule = {
  name: 'fee_vs_notification',
  rule: 'fee_vs_notification',
  kinds: ['fee_mismatch'],
  reads: { suspects: true },
  when: () => `f.notification_id is not null and ${feeCheck.condition}`,
  select: () => ({
    discrepancy_key: `'fee_mismatch:fee_vs_notification:' || f.transaction_id`,
    transaction_id: 'f.transaction_id',
    merchant_transaction_id: 'f.merchant_transaction_id',
    business_date: 'f.transaction_on',
    currency: 'f.currency',
    expected: `jsonb_build_object('fee_cents', f.fee_cents)`,
    actual: `jsonb_build_object('fee_cents', f.n_fee)`,
    expected_amount_cents: 'f.fee_cents',
    actual_amount_cents: 'f.n_fee',
    difference_cents: 'f.n_fee - f.fee_cents',
    candidates: notificationOnly,
  }),
};

export const NOTIFICATION_RULES: readonly Rule[] = [
  notificationMissing,
  notificationLate,
  notificationMismatch,
  feeVsNotification,
];
