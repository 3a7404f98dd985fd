import type {
  AdjustmentRecord,
  LedgerRecord,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { adjustmentKey } from '../../provider/formats/legacy/records.ts';
import type { HistoryTransaction } from '../history.ts';
import { returnNotificationBody } from '../notifications.ts';
import { draw, expect, plusMs, type Planting } from './planting.ts';

/**
 * The merchant's side of returns and adjustments: the return notifications it received (and those it
 * did not), notifications of returns the provider never reports, the ledger's ADJUSTMENT entries
 * (and the adjustments it did not book), and ADJUSTMENT entries the provider never made, which only
 * the settlement roll-forward sees.
 */

/**
 * The return notification of report return `j` as received, or the discrepancy that replaces it; a
 * representment the notification announces is never followed by a re-debit in the sandbox.
 */
export function plantReturnNotification(
  p: Planting,
  j: number,
  r: ReturnRecord,
  f: HistoryTransaction,
  merchantId: string,
): void {
  const ret = f.return!;
  if (draw(p.seed, j, 13) < p.rates.returnNotificationMissing) {
    expect(
      p,
      `return_notification_missing:${r.return_transaction_id}`,
      'return_notification_missing',
      r.amount_cents,
      null,
      r.returned_on!,
    );
    return;
  }
  const delay = 60_000 + Math.floor(draw(p.seed, j, 14) * 600_000);
  p.notifications.push({
    kind: 'return',
    received_at: plusMs(ret.returnedAt, delay),
    payload: returnNotificationBody(f, merchantId),
  });
  if (ret.representment && ret.nextActionDate) {
    expect(
      p,
      `representment_missed:${r.return_transaction_id}`,
      'representment_missed',
      r.amount_cents,
      null,
      ret.nextActionDate,
    );
  }
}

/** A return notification of report transaction `i` that the provider's return reports never list. */
export function plantUnreportedReturn(p: Planting, i: number, t: TransactionRecord): void {
  if (t.status !== 'SUCCESSFUL' || draw(p.seed, i, 15) >= p.rates.returnNotReported) return;
  const id = `Q${t.transaction_id.slice(1)}`;
  const receivedAt = plusMs(t.transaction_at!, 24 * 3600 * 1000);
  p.notifications.push({
    kind: 'return',
    received_at: receivedAt,
    payload: {
      merchant: {
        merchantId: t.merchant_id,
        merchantTransactionId: t.merchant_transaction_id,
        merchantUserId: t.merchant_user_id,
      },
      transaction: {
        transactionType: t.transaction_type,
        transactionFee: 0,
        transactionStatus: 'RETURNED',
        transactionAmount: t.amount_cents,
        currencyCode: t.currency,
        transactionId: id,
        originalTransactionId: t.transaction_id,
        returnCode: '901',
        nextActionDate: null,
      },
    },
  });
  expect(
    p,
    `return_not_reported:${id}`,
    'return_not_reported',
    null,
    t.amount_cents,
    easternDateOf(receivedAt),
  );
}

/**
 * The provider's adjustments as the warehouse keys them (the legacy parser's hash of the fields, and
 * `#1`: no two identical ones in a sandbox report), each booked in the ledger as an ADJUSTMENT entry
 * unless planted unbooked.
 */
export function plantAdjustmentBookings(
  p: Planting,
  adjustments: readonly AdjustmentRecord[],
): AdjustmentRecord[] {
  return adjustments.map((a, k) => {
    const { kind: _kind, adjustment_key: _key, raw: _raw, ...fields } = a;
    const keyed = { ...a, adjustment_key: `${adjustmentKey(fields)}#1` };
    if (draw(p.seed, k, 16) < p.rates.adjustmentNotBooked) {
      expect(
        p,
        `adjustment_not_booked:${keyed.adjustment_key}`,
        'adjustment_not_booked',
        a.amount_cents - (a.fee_cents ?? 0),
        null,
        a.adjusted_on,
      );
    } else {
      p.ledger.push(
        adjustmentEntry(
          `ADJ-${a.transaction_id}`,
          a.transaction_id,
          a.amount_cents,
          a.fee_cents,
          a.currency,
          `${a.adjusted_on}T17:00:00.000Z`,
          a.notes,
        ),
      );
    }
    return keyed;
  });
}

/**
 * An ADJUSTMENT the merchant booked for report transaction `i` and the provider never made: no rule
 * pairs a ledger adjustment, so only the roll-forward of its day sees it (settlement_unexplained).
 */
export function plantLedgerOnlyAdjustment(
  p: Planting,
  i: number,
  t: TransactionRecord,
  planted: Set<string>,
): void {
  if (draw(p.seed, i, 17) >= p.rates.ledgerOnlyAdjustment) return;
  const bookedAt = plusMs(t.transaction_at!, 24 * 3600 * 1000);
  const key = `settlement_unexplained:${easternDateOf(bookedAt)}:${t.currency}`;
  // Positive: the provider's adjustments in the sandbox take money back, so none can book it by chance.
  const amount = 1 + Math.floor(draw(p.seed, i, 18) * 1000);
  p.ledger.push(
    adjustmentEntry(
      `LADJ-${t.transaction_id}`,
      t.transaction_id,
      amount,
      0,
      t.currency,
      bookedAt,
      'goodwill credit',
    ),
  );
  if (!planted.has(key)) {
    planted.add(key);
    expect(p, key, 'settlement_unexplained', null, null, easternDateOf(bookedAt));
  }
}

function adjustmentEntry(
  mtid: string,
  transactionId: string | null,
  amountCents: number,
  feeCents: number | null,
  currency: string,
  bookedAt: string,
  description: string | null,
): LedgerRecord {
  return {
    kind: 'ledger',
    merchant_transaction_id: mtid,
    transaction_type: 'ADJUSTMENT',
    amount_cents: amountCents,
    currency,
    status: 'SUCCESSFUL',
    booked_at: bookedAt,
    transaction_id: transactionId,
    original_merchant_transaction_id: null,
    merchant_user_id: null,
    product: null,
    fee_cents: feeCents,
    description,
  };
}
