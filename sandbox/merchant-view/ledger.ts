import type {
  LedgerRecord,
  LegacyTransactionRecord,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import type { HistoryTransaction } from '../history.ts';
import { businessDateOf, draw, expect, plusMs, type Planting } from './planting.ts';

/** The merchant's ledger: what it booked for each provider transaction and return, and how it disagrees. */

export function ledgerEntry(t: TransactionRecord, over: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    kind: 'ledger',
    merchant_transaction_id: t.merchant_transaction_id!,
    transaction_type: t.transaction_type!,
    amount_cents: t.amount_cents,
    currency: t.currency,
    status: t.status === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'REJECTED',
    booked_at: plusMs(t.transaction_at!, 2000),
    transaction_id: t.transaction_id,
    original_merchant_transaction_id: null,
    merchant_user_id: t.merchant_user_id,
    product: 'IBT',
    fee_cents: null,
    description: null,
    ...over,
  };
}

/** The ledger entry of report transaction `i`, or the way it disagrees. */
export function plantLedgerEntry(p: Planting, i: number, t: TransactionRecord): void {
  const { seed, rates, ledger } = p;
  const on = businessDateOf;
  const u = draw(seed, i, 1);
  const ok = t.status === 'SUCCESSFUL';
  let c = rates.missingInLedger;
  const id = t.transaction_id;
  if (t.status === 'PENDING') {
    // Still pending when the view is taken (it settles weeks later): booked as pending, or not at all.
    if (u < c) expect(p, `missing_in_ledger:${id}`, 'missing_in_ledger', t.amount_cents, null, on(t));
    else ledger.push(ledgerEntry(t, { status: 'PENDING' }));
    return;
  }
  if (u < c) {
    if (ok) expect(p, `missing_in_ledger:${id}`, 'missing_in_ledger', t.amount_cents, null, on(t));
    else if (draw(seed, i, 5) < 0.5) ledger.push(ledgerEntry(t));
  } else if (u < (c += rates.amountMismatch)) {
    const amount = t.amount_cents + 1 + Math.floor(draw(seed, i, 6) * 500);
    ledger.push(ledgerEntry(t, { amount_cents: amount }));
    expect(p, `amount_mismatch:${id}`, 'amount_mismatch', t.amount_cents, amount, on(t));
  } else if (u < (c += rates.currencyMismatch)) {
    ledger.push(ledgerEntry(t, { currency: t.currency === 'CAD' ? 'USD' : 'CAD' }));
    expect(p, `currency_mismatch:${id}`, 'currency_mismatch', t.amount_cents, t.amount_cents, on(t));
  } else if (u < (c += rates.typeMismatch)) {
    ledger.push(ledgerEntry(t, { transaction_type: t.transaction_type === 'DEBIT' ? 'CREDIT' : 'DEBIT' }));
    expect(p, `type_mismatch:${id}`, 'type_mismatch', t.amount_cents, t.amount_cents, on(t));
  } else if (u < c + rates.statusMismatch) {
    ledger.push(ledgerEntry(t, { status: ok ? 'REJECTED' : 'SUCCESSFUL' }));
    expect(p, `status_mismatch:${id}`, 'status_mismatch', t.amount_cents, t.amount_cents, on(t));
  } else if (ok || draw(seed, i, 5) < 0.5) {
    // Rejected transactions are booked half the time: not booking them is not a discrepancy.
    ledger.push(ledgerEntry(t));
  }
}

/** Ledger-only entries: the merchant booked something the provider never saw. */
export function plantLedgerOnlyEntry(p: Planting, i: number, t: TransactionRecord): void {
  const { seed, rates, ledger } = p;
  if (draw(seed, i, 8) >= rates.missingAtProvider) return;
  const mtid = `MV-${t.transaction_id}`;
  const booked = draw(seed, i, 9) < 0.8;
  ledger.push(
    ledgerEntry(t, {
      merchant_transaction_id: mtid,
      transaction_id: null,
      amount_cents: 100 + Math.floor(draw(seed, i, 10) * 100_000),
      status: booked ? 'SUCCESSFUL' : 'FAILED',
      booked_at: plusMs(t.transaction_at!, 1000),
    }),
  );
  const last = ledger[ledger.length - 1]!;
  // A FAILED entry the provider never saw is no discrepancy: the request may never have left.
  if (booked)
    expect(
      p,
      `missing_at_provider:${mtid}`,
      'missing_at_provider',
      last.amount_cents,
      null,
      easternDateOf(last.booked_at),
    );
}

/**
 * A legacy-only transaction (the e-transfer product), booked like the others, with the ledger
 * disagreements the pipeline can see on a legacy row (no type: the legacy code is not documented).
 */
export function plantLegacyLedgerEntry(
  p: Planting,
  i: number,
  g: LegacyTransactionRecord,
  f: HistoryTransaction,
): void {
  const { seed, rates, ledger } = p;
  const id = g.transaction_id;
  const ok = g.status === 'SUCCESSFUL';
  const entry = (over: Partial<LedgerRecord> = {}): LedgerRecord => ({
    kind: 'ledger',
    merchant_transaction_id: g.merchant_transaction_id!,
    transaction_type: f.type,
    amount_cents: g.amount_cents!,
    currency: g.currency!,
    status: ok ? 'SUCCESSFUL' : 'FAILED',
    booked_at: plusMs(g.transaction_at!, 2000),
    transaction_id: id,
    original_merchant_transaction_id: null,
    merchant_user_id: g.merchant_user_id,
    product: null,
    fee_cents: null,
    description: 'e-transfer',
    ...over,
  });
  const amount = g.amount_cents!;
  const u = draw(seed, i, 1);
  let c = rates.missingInLedger;
  if (u < c) {
    if (ok) expect(p, `missing_in_ledger:${id}`, 'missing_in_ledger', amount, null, g.transaction_on);
  } else if (u < (c += rates.amountMismatch)) {
    const other = amount + 1 + Math.floor(draw(seed, i, 6) * 500);
    ledger.push(entry({ amount_cents: other }));
    expect(p, `amount_mismatch:${id}`, 'amount_mismatch', amount, other, g.transaction_on);
  } else if (u < (c += rates.currencyMismatch)) {
    ledger.push(entry({ currency: g.currency === 'CAD' ? 'USD' : 'CAD' }));
    expect(p, `currency_mismatch:${id}`, 'currency_mismatch', amount, amount, g.transaction_on);
  } else if (u < c + rates.statusMismatch) {
    ledger.push(entry({ status: ok ? 'REJECTED' : 'SUCCESSFUL' }));
    expect(p, `status_mismatch:${id}`, 'status_mismatch', amount, amount, g.transaction_on);
  } else if (ok || draw(seed, i, 5) < 0.5) {
    ledger.push(entry());
  }
}

/** The booking of return `j`: booked, not booked, or booked with another amount. */
export function plantReturnBooking(p: Planting, j: number, r: ReturnRecord): void {
  const { seed, rates, ledger } = p;
  const u = draw(seed, j, 11);
  const entry: LedgerRecord = {
    kind: 'ledger',
    merchant_transaction_id: `${r.merchant_transaction_id}-R`,
    transaction_type: 'RETURN',
    amount_cents: r.amount_cents,
    currency: r.currency,
    status: 'RETURNED',
    booked_at: `${r.returned_on}T18:00:00.000Z`,
    transaction_id: r.return_transaction_id,
    original_merchant_transaction_id: r.merchant_transaction_id,
    merchant_user_id: r.merchant_user_id,
    product: 'IBT',
    fee_cents: null,
    description: `return ${r.return_code}`,
  };
  if (u < rates.returnNotBooked) {
    expect(
      p,
      `return_not_booked:${r.return_transaction_id}`,
      'return_not_booked',
      r.amount_cents,
      null,
      r.returned_on!,
    );
  } else if (u < rates.returnNotBooked + rates.returnAmountMismatch) {
    const amount = r.amount_cents - 1 - Math.floor(draw(seed, j, 12) * 50);
    ledger.push({ ...entry, amount_cents: amount });
    expect(
      p,
      `amount_mismatch:return:${r.return_transaction_id}`,
      'amount_mismatch',
      r.amount_cents,
      amount,
      r.returned_on!,
    );
  } else {
    ledger.push(entry);
  }
}
