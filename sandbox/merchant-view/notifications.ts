import type { TransactionRecord } from '../../domain/records.ts';
import type { HistoryTransaction } from '../history.ts';
import { businessDateOf, draw, expect, plusMs, type Planting } from './planting.ts';

/** The notifications the merchant received, and the ways they disagree with the provider. */

/** Notification delay that makes a delivery late under the default settings (3600 s). */
const LATE_DELAY_MS = 2 * 3600 * 1000;

const NOTIFY_STATUS = { SUCCESSFUL: 'SUCCESS', REJECTED: 'REJECTED', FAILED: 'FAILED' } as const;

export function notificationBody(
  f: HistoryTransaction | undefined,
  t: TransactionRecord,
  over: Record<string, unknown> = {},
) {
  return {
    merchant: {
      merchantId: t.merchant_id,
      merchantTransactionId: t.merchant_transaction_id,
      merchantUserId: t.merchant_user_id,
    },
    accountInfo: f
      ? {
          accountToken: f.accountToken,
          accountLabel: f.accountLabel,
          accountType: f.accountType,
          fiName: f.bankName,
        }
      : {},
    transaction: {
      transactionId: t.transaction_id,
      transactionType: t.transaction_type,
      transactionStatus: f ? NOTIFY_STATUS[f.outcome] : t.status === 'SUCCESSFUL' ? 'SUCCESS' : 'REJECTED',
      transactionAmount: t.amount_cents,
      transactionFee: t.fee_cents,
      currencyCode: t.currency,
      ...(t.error_code ? { errorCode: t.error_code } : {}),
      ...over,
    },
  };
}

/** The notification of report transaction `i` as received, or the discrepancy that replaces it. */
export function plantNotification(
  p: Planting,
  i: number,
  f: HistoryTransaction | undefined,
  t: TransactionRecord,
): void {
  const { seed, rates } = p;
  const on = businessDateOf;
  if (t.status === 'PENDING') return;
  // transactionNotifyStatus: I not sent (the provider's side), S sent (the merchant holds none here).
  if (t.notify_status === 'I') {
    expect(p, `notification_undelivered:${t.transaction_id}`, 'notification_undelivered', null, null, on(t));
    return;
  }
  if (t.notify_status !== 'C') {
    expect(p, `notification_missing:${t.transaction_id}`, 'notification_missing', null, null, on(t));
    return;
  }
  const u = draw(seed, i, 2);
  let over: Record<string, unknown> = {};
  let delay = 1000 + Math.floor(draw(seed, i, 3) * 600_000);
  let c = rates.notificationMissing;
  if (u < c) {
    if (draw(seed, i, 13) < rates.notificationQuarantined) {
      // Delivered, but refused by the receiver for its content: it sits in quarantine.
      const refused = notificationBody(f, t, { currencyCode: t.currency.toLowerCase() });
      p.notifications.push({
        kind: 'transaction',
        received_at: plusMs(t.transaction_at!, delay),
        payload: refused,
      });
      p.quarantined++;
      expect(
        p,
        `notification_quarantined:${t.transaction_id}`,
        'notification_quarantined',
        null,
        null,
        on(t),
      );
      return;
    }
    expect(p, `notification_missing:${t.transaction_id}`, 'notification_missing', null, null, on(t));
    return;
  }
  if (u < (c += rates.notificationLate)) {
    delay = LATE_DELAY_MS;
    expect(p, `notification_late:${t.transaction_id}`, 'notification_late', null, null, on(t));
  } else if (u < (c += rates.notificationMismatch)) {
    const amount = t.amount_cents < 100_000_000 ? t.amount_cents + 1 : t.amount_cents - 1;
    over = { transactionAmount: amount };
    expect(
      p,
      `notification_mismatch:${t.transaction_id}`,
      'notification_mismatch',
      t.amount_cents,
      amount,
      on(t),
    );
  } else if (u < (c += rates.feeVsNotification)) {
    over = { transactionFee: (t.fee_cents ?? 0) + 5 };
    expect(
      p,
      `fee_mismatch:fee_vs_notification:${t.transaction_id}`,
      'fee_mismatch',
      t.fee_cents,
      (t.fee_cents ?? 0) + 5,
      on(t),
    );
  } else if (u < c + rates.notificationContradiction) {
    // An earlier delivery that says the opposite outcome: the history contradicts itself.
    const opposite = t.status === 'SUCCESSFUL' ? 'FAILED' : 'SUCCESS';
    p.notifications.push({
      kind: 'transaction',
      received_at: plusMs(t.transaction_at!, Math.floor(delay / 2)),
      payload: notificationBody(f, t, { transactionStatus: opposite }),
    });
    expect(
      p,
      `notification_contradiction:${t.transaction_id}`,
      'notification_contradiction',
      t.amount_cents,
      null,
      on(t),
    );
  }
  const body = notificationBody(f, t, over);
  const receivedAt = plusMs(t.transaction_at!, delay);
  p.notifications.push({ kind: 'transaction', received_at: receivedAt, payload: body });
  if (draw(seed, i, 4) < rates.duplicateDelivery) {
    p.notifications.push({ kind: 'transaction', received_at: plusMs(receivedAt, 30_000), payload: body });
  }
}
