import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * discrepancies.business_date's comment (0029) for return_not_reported: the date a return's first
 * notification was received, of every notification naming it, not the first of the run's range
 * (reconcile/rules/return-notifications.ts, RECEIVED_RETURNS; docs/finance.md). Only the column's
 * comment changes: docs/data-dictionary.md is written from it. `down` puts 0029's text back.
 */

const OLD_COMMENT =
  'Eastern business date the problem belongs to. For the kinds with a grace period (graceBusinessDays, business days; docs/finance.md) it is the date the grace period counts from: ' +
  'missing_at_provider, the Eastern date of the ledger booking (merchant_ledger.booked_at); ' +
  'return_not_booked and return_notification_missing, provider_returns.returned_on; ' +
  'return_not_reported, the Eastern date the return notification was received (notifications.received_at); ' +
  'representment_missed, provider_returns.next_action_date; ' +
  'adjustment_not_booked, provider_adjustments.adjusted_on; ' +
  'settlement_unexplained, the day of the roll-forward (daily_settlement_totals.business_date). ' +
  "The other kinds, with no grace period, take the provider row's date: missing_in_ledger, amount_mismatch, currency_mismatch, type_mismatch, status_mismatch, fee_mismatch, " +
  'notification_missing, notification_late, notification_undelivered, notification_mismatch, duplicate_merchant_transaction, source_conflict.';

const NEW_COMMENT =
  'Eastern business date the problem belongs to. For the kinds with a grace period (graceBusinessDays, business days; docs/finance.md) it is the date the grace period counts from: ' +
  'missing_at_provider, the Eastern date of the ledger booking (merchant_ledger.booked_at); ' +
  'return_not_booked and return_notification_missing, provider_returns.returned_on; ' +
  'return_not_reported, the Eastern date the first notification of the return was received (notifications.received_at; a return announced twice is one return, announced on its first day); ' +
  'representment_missed, provider_returns.next_action_date; ' +
  'adjustment_not_booked, provider_adjustments.adjusted_on; ' +
  'settlement_unexplained, the day of the roll-forward (daily_settlement_totals.business_date). ' +
  "The other kinds, with no grace period, take the provider row's date: missing_in_ledger, amount_mismatch, currency_mismatch, type_mismatch, status_mismatch, fee_mismatch, " +
  'notification_missing, notification_late, notification_undelivered, notification_mismatch, duplicate_merchant_transaction, source_conflict.';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`comment on column discrepancies.business_date is ${sql.lit(NEW_COMMENT)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`comment on column discrepancies.business_date is ${sql.lit(OLD_COMMENT)}`.execute(db);
}
