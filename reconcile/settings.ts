/** The discrepancy kinds of docs/finance.md (exact names: users and tests depend on them). */
export const DISCREPANCY_KINDS = [
  'missing_in_ledger',
  'missing_at_provider',
  'amount_mismatch',
  'currency_mismatch',
  'type_mismatch',
  'status_mismatch',
  'return_not_booked',
  'fee_mismatch',
  'notification_missing',
  'notification_late',
  'notification_undelivered',
  'notification_mismatch',
  'duplicate_merchant_transaction',
  'source_conflict',
  'stuck_pending',
  'notification_quarantined',
  'notification_contradiction',
  // Returns and adjustments (docs/finance.md: each kind's cause and what to do).
  'return_notification_missing',
  'return_not_reported',
  'representment_missed',
  'adjustment_not_booked',
  'settlement_unexplained',
] as const;
export type DiscrepancyKind = (typeof DISCREPANCY_KINDS)[number];

/** Tunables of matching. Every run records the settings it used in reconcile_runs.settings. */
export interface ReconcileSettings {
  /**
   * Business days (Canadian bank-holiday calendar, domain/time/business-days.ts) the provider has to
   * report a ledger entry, and the merchant has to book a return, before it is a discrepancy.
   */
  readonly graceBusinessDays: number;
  /** A notification first received more than this many seconds after the transaction is late. */
  readonly notificationLateAfterSeconds: number;
  /** Count the Civic Holiday (first Monday of August) as a bank holiday. */
  readonly civicHoliday: boolean;
  /**
   * RECON_STUCK_PENDING_DAYS: business days after its transaction date a transaction the provider
   * still reports PENDING becomes a stuck_pending discrepancy.
   */
  readonly stuckPendingBusinessDays: number;
}

export const DEFAULT_SETTINGS: ReconcileSettings = Object.freeze({
  graceBusinessDays: 2,
  notificationLateAfterSeconds: 3600,
  civicHoliday: true,
  stuckPendingBusinessDays: 5,
});

export function resolveSettings(partial: Partial<ReconcileSettings> = {}): ReconcileSettings {
  const s = { ...DEFAULT_SETTINGS, ...partial };
  for (const key of [
    'graceBusinessDays',
    'notificationLateAfterSeconds',
    'stuckPendingBusinessDays',
  ] as const) {
    if (!Number.isSafeInteger(s[key]) || s[key] < 0) {
      throw new RangeError(`reconcile setting ${key}=${s[key]}: use a non-negative integer`);
    }
  }
  return Object.freeze(s);
}
