/**
 * The matching rules and discrepancy kinds in plain words, for people: what was compared, what the
 * kind means, and what to do about it. Rule names are those of the rules in reconcile/rules/ (RULES).
 */

export interface RuleExplanation {
  rule: string;
  kind: string;
  /** What the rule compares, one sentence. */
  compares: string;
  /** What this kind means, one sentence. */
  means: string;
  /** What operations should do. */
  todo: string;
  /** Names of the two sides of the diff. */
  expected: string;
  actual: string;
}

const RULES: Record<string, { compares: string; expected: string; actual: string }> = {
  transaction_vs_ledger: {
    compares:
      'Each provider transaction is paired with the merchant ledger entry of the same merchant transaction id, and their type, amount, currency and status are compared.',
    expected: 'provider report',
    actual: 'merchant ledger',
  },
  merchant_transaction_id_unique: {
    compares:
      'A merchant transaction id must name one provider transaction; later rows that reuse it are flagged.',
    expected: 'first provider row',
    actual: 'this provider row',
  },
  ledger_vs_provider: {
    compares:
      'Each booked DEBIT or CREDIT in the ledger must appear at the provider once the grace period (business days) has run out.',
    expected: 'merchant ledger',
    actual: 'provider report',
  },
  ledger_return_vs_provider: {
    compares:
      'Each RETURN booked in the ledger must appear among the provider returns once the grace period has run out.',
    expected: 'merchant ledger',
    actual: 'provider returns',
  },
  fee_vs_schedule: {
    compares:
      'The fee the provider charged on a successful transaction is recomputed from the contracted fee schedule.',
    expected: 'fee schedule',
    actual: 'provider report',
  },
  fee_vs_notification: {
    compares: 'The fee in the notification is compared with the fee in the report.',
    expected: 'provider report',
    actual: 'notification',
  },
  report_notify_status: {
    compares:
      'The report says whether the provider notified the merchant (transactionNotifyStatus: C completed, S sent, I not sent); the receiver must hold the notification of every final transaction the provider sent.',
    expected: 'provider report',
    actual: 'notification history',
  },
  notification_delay: {
    compares: 'The first notification must arrive within the configured delay after the transaction.',
    expected: 'provider report',
    actual: 'notification history',
  },
  notification_history: {
    compares:
      'Every notification received for a transaction is read, not only the latest: they must agree on whether it succeeded or failed.',
    expected: 'provider report',
    actual: 'notification history',
  },
  notification_vs_pending_report: {
    compares:
      'A notification with a final status is compared with the report once the grace period has run out: the report must no longer say PENDING.',
    expected: 'provider report',
    actual: 'notification',
  },
  pending_until_final: {
    compares:
      'Every transaction the provider reports PENDING is followed every night (status endpoint, report re-pulls) until the provider reports it final; it must be final within the configured business days.',
    expected: 'final within',
    actual: 'provider, last checked',
  },
  notification_vs_report: {
    compares:
      'The fields of the notification (amount, currency, type, status, merchant id) are compared with the report.',
    expected: 'provider report',
    actual: 'notification',
  },
  return_vs_ledger: {
    compares:
      'Each provider return is linked to its original transaction and to the RETURN entry of the ledger, and their amounts and currencies are compared.',
    expected: 'provider return',
    actual: 'merchant ledger',
  },
  return_report_vs_notification: {
    compares:
      "Each return in the provider's return report (JSON or CSV) is matched with the return notification that announced it, by the return's transaction id or its original's.",
    expected: 'provider return report',
    actual: 'return notifications',
  },
  return_notification_vs_report: {
    compares:
      "Each return notification received is matched with a return of the provider's reports once the grace period from its receipt has run out.",
    expected: 'provider return report',
    actual: 'return notification',
  },
  representment_vs_report: {
    compares:
      'A return the provider said is RETURNED_WITH_REPRESENTMENT must be followed, by its next action date, by a new provider transaction of the same merchant transaction id (the re-debit).',
    expected: 'provider return (next action date)',
    actual: 'provider transactions',
  },
  adjustment_vs_ledger: {
    compares:
      'Each provider adjustment (legacy adjustment report) is matched with a ledger ADJUSTMENT entry of the same provider transaction, currency, signed amount and fee.',
    expected: 'provider adjustment',
    actual: 'merchant ledger',
  },
  settlement_roll_forward: {
    compares:
      "Per Eastern day and currency, the provider's net (payins - payouts - fees - returns + representments + adjustments) is compared with the ledger's; the open discrepancies of the day explain part of the difference.",
    expected: 'provider net',
    actual: 'ledger net',
  },
  report_vs_legacy: {
    compares: 'The JSON report and the legacy query interface must say the same about one transaction id.',
    expected: 'JSON report',
    actual: 'legacy interface',
  },
};

const KINDS: Record<string, { means: string; todo: string }> = {
  missing_in_ledger: {
    means: 'The provider moved (or may move) money that the merchant ledger has no entry for.',
    todo: 'Book the transaction in the ledger, or resolve as provider_error if the provider reported it by mistake.',
  },
  missing_at_provider: {
    means: 'The ledger booked money that the provider has not reported after the grace period.',
    todo: 'Ask the provider about the transaction; if it never happened, reverse the ledger entry.',
  },
  amount_mismatch: {
    means: 'Both sides know the transaction but disagree on the amount.',
    todo: 'Correct the ledger (fixed_in_ledger; the next run checks it) or raise it with the provider.',
  },
  currency_mismatch: {
    means: 'Both sides know the transaction but disagree on the currency.',
    todo: 'Correct the ledger entry currency, or raise it with the provider.',
  },
  type_mismatch: {
    means: 'Both sides know the transaction but one says DEBIT and the other CREDIT (or another type).',
    todo: 'Check the direction of the money and correct the ledger.',
  },
  status_mismatch: {
    means:
      'The ledger treats the transaction as done while the provider says it failed or was rejected (or the reverse).',
    todo: 'Reverse or complete the ledger entry to follow the provider status.',
  },
  return_not_booked: {
    means:
      'The provider returned a transaction and the ledger has no RETURN entry for it after the grace period.',
    todo: 'Book the return against the original transaction; note the representment date.',
  },
  fee_mismatch: {
    means: 'The fee charged differs from the contracted schedule or from the notification.',
    todo: 'Raise the difference with the provider (provider_error) or accept it if the schedule is out of date.',
  },
  notification_missing: {
    means:
      'The provider says it sent the notification (transactionNotifyStatus S, sent; or C, completed: the delivery was acknowledged), and the receiver holds none. The merchant side is where to look.',
    todo: 'Check the receiver at the time of the transaction (logs, answers other than 200, the address the provider calls); with C, find where the acknowledged delivery went. Ask the provider to resend it once the cause is known.',
  },
  notification_undelivered: {
    means:
      'The provider says it has not sent the notification (transactionNotifyStatus I, not sent), and none was received.',
    todo: 'Raise it with the provider: ask it to send the notification; check that the notification address it holds is the receiver.',
  },
  notification_quarantined: {
    means:
      'A notification for this transaction reached the receiver and was refused for its content; it sits in quarantine (the evidence names it and the reason).',
    todo: 'Fix the cause named by the reason (an account, a secret, a field the receiver refuses), then run recon notifications replay: the next run matches the notification.',
  },
  notification_contradiction: {
    means:
      'The notifications received for this transaction contradict each other about the outcome (one says it succeeded, another that it failed), whichever arrived last.',
    todo: 'Trust the report for the outcome once it is final; raise the contradicting notifications with the provider, and check that the ledger follows the report, not the last notification.',
  },
  stuck_pending: {
    means:
      'The provider still reports the transaction PENDING the configured number of business days (RECON_STUCK_PENDING_DAYS) after its transaction date. The evidence says when it was last checked and what the provider said.',
    todo: 'Ask the provider about the transaction; do not release goods or funds that depend on it. It resolves by itself when the provider reports it final.',
  },
  notification_late: {
    means: 'The first notification arrived later than the configured delay.',
    todo: 'Usually accept; repeated lateness is a provider issue to raise.',
  },
  notification_mismatch: {
    means:
      'The notification says something different from the report about the same transaction (or says it is final while the report still says PENDING after the grace period).',
    todo: 'Trust the report for settlement; raise the notification content with the provider.',
  },
  duplicate_merchant_transaction: {
    means: 'Two provider transactions carry the same merchant transaction id.',
    todo: 'Find which one the merchant meant; the other may need a refund.',
  },
  source_conflict: {
    means: 'The JSON report and the legacy interface disagree about the same transaction.',
    todo: 'Raise it with the provider (provider_error); settle on the JSON report meanwhile.',
  },
  return_notification_missing: {
    means: 'The provider reported a return, and no return notification for it was received.',
    todo: 'Check the receiver and its quarantine for that day; ask the provider to resend the return notification. The money is judged by return_not_booked.',
  },
  return_not_reported: {
    means:
      "A return notification was received, and the provider's return reports do not list that return after the grace period.",
    todo: 'Ask the provider whether the payment was returned; do not book the return on the notification alone. If it was, the next pull of the return report closes this.',
  },
  representment_missed: {
    means:
      'The provider said it would debit a returned payin again (RETURNED_WITH_REPRESENTMENT) on its next action date; the date has passed and no re-debit was reported.',
    todo: 'Ask the provider about the representment; if it will not happen, treat the payin as returned for good and collect from the consumer another way.',
  },
  adjustment_not_booked: {
    means:
      'The provider adjusted the merchant account (legacy adjustment report) and the ledger has no matching ADJUSTMENT entry after the grace period.',
    todo: 'Book the adjustment as an ADJUSTMENT ledger entry (transaction_id, signed amount and fee as reported), or dispute it with the provider (provider_error).',
  },
  settlement_unexplained: {
    means:
      "The provider's and the ledger's nets of the day differ by more than the day's open discrepancies explain.",
    todo: 'Read the day in settlement_items: a ledger entry of a kind no rule pairs (an ADJUSTMENT or REPRESENTMENT the provider never reported), or a discrepancy resolved as accepted, leaves money nothing explains.',
  },
};

export function explainRule(kind: string, rule: string): RuleExplanation {
  const r = RULES[rule] ?? { compares: `Rule ${rule}.`, expected: 'expected', actual: 'actual' };
  const k = KINDS[kind] ?? { means: `A ${kind.replaceAll('_', ' ')}.`, todo: 'Investigate the evidence.' };
  return {
    rule,
    kind,
    compares: r.compares,
    means: k.means,
    todo: k.todo,
    expected: r.expected,
    actual: r.actual,
  };
}

/** What a kind means and what to do about it, without a rule (the report's attention table). */
export function explainKind(kind: string): { means: string; todo: string } {
  return KINDS[kind] ?? { means: `A ${kind.replaceAll('_', ' ')}.`, todo: 'Investigate the evidence.' };
}

const KIND_LABELS: Record<string, string> = {
  missing_in_ledger: 'Not in the ledger',
  missing_at_provider: 'Not at the provider',
  amount_mismatch: 'Amounts differ',
  currency_mismatch: 'Currencies differ',
  type_mismatch: 'Debit or credit differs',
  status_mismatch: 'Statuses differ',
  return_not_booked: 'Return not booked',
  fee_mismatch: 'Fee differs',
  notification_missing: 'Notification missing',
  notification_late: 'Notification late',
  notification_undelivered: 'Notification undelivered',
  notification_mismatch: 'Notification differs',
  duplicate_merchant_transaction: 'Merchant id used twice',
  source_conflict: 'Report and legacy disagree',
  stuck_pending: 'Pending too long',
  notification_quarantined: 'Notification quarantined',
  notification_contradiction: 'Notifications contradict',
};

/** A kind in a few words, for lists and charts: `missing_in_ledger` → "Not in the ledger". */
export function kindLabel(kind: string): string {
  const words = KIND_LABELS[kind] ?? kind.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
