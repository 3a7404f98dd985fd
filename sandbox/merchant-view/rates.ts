/** How often the merchant side disagrees with the provider, by way of disagreeing. */

export interface InjectionRates {
  missingInLedger: number;
  amountMismatch: number;
  currencyMismatch: number;
  typeMismatch: number;
  statusMismatch: number;
  /** Ledger-only entries, as a fraction of the provider transactions. */
  missingAtProvider: number;
  returnNotBooked: number;
  returnAmountMismatch: number;
  notificationMissing: number;
  notificationLate: number;
  notificationMismatch: number;
  feeVsNotification: number;
  /** Notifications whose history contradicts itself: an earlier delivery says the opposite outcome. */
  notificationContradiction: number;
  /** Of the missing notifications, the share delivered but quarantined by the receiver instead. */
  notificationQuarantined: number;
  duplicateMerchantTransaction: number;
  /** Passed to the history as legacyConflictRate. */
  sourceConflict: number;
  /** Notifications delivered twice (same body): never a discrepancy. */
  duplicateDelivery: number;
  /** Payins booked with a digit of the merchant transaction id swapped or dropped (merchant-view/near-misses.ts). */
  mistypedId: number;
  /** Payins booked as two ledger entries. */
  splitBooking: number;
  /** Payins booked together with the next payin of the same currency (within three days), as one entry. */
  combinedBooking: number;
  /** Passed to the history as feeOneCentOffRate: the provider's fee one cent above the contract's. */
  feeOneCentOff: number;
  /** Report returns whose return notification never arrives. */
  returnNotificationMissing: number;
  /** Return notifications of a return the provider never reports, per successful report transaction. */
  returnNotReported: number;
  /** Provider adjustments the ledger does not book. */
  adjustmentNotBooked: number;
  /** Ledger ADJUSTMENT entries the provider never made, per report transaction. */
  ledgerOnlyAdjustment: number;
}

export const DEFAULT_RATES: InjectionRates = {
  missingInLedger: 0.02,
  amountMismatch: 0.02,
  currencyMismatch: 0.01,
  typeMismatch: 0.01,
  statusMismatch: 0.015,
  missingAtProvider: 0.015,
  returnNotBooked: 0.1,
  returnAmountMismatch: 0.1,
  notificationMissing: 0.02,
  notificationLate: 0.02,
  notificationMismatch: 0.02,
  feeVsNotification: 0.02,
  notificationContradiction: 0.01,
  notificationQuarantined: 0.3,
  duplicateMerchantTransaction: 0.01,
  sourceConflict: 0.2,
  duplicateDelivery: 0.05,
  mistypedId: 0.015,
  splitBooking: 0.006,
  combinedBooking: 0.008,
  feeOneCentOff: 0.01,
  returnNotificationMissing: 0.1,
  returnNotReported: 0.004,
  adjustmentNotBooked: 0.2,
  ledgerOnlyAdjustment: 0.002,
};
