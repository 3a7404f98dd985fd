import { contractedFeeCents, type FeeRule } from '../../domain/fee-schedule.ts';
import type { TransactionRecord } from '../../domain/records.ts';
import { businessDateOf, expect, type Planting } from './planting.ts';

export interface FeeScheduleEntry extends FeeRule {
  readonly product: string;
  readonly transactionType: 'DEBIT' | 'CREDIT';
  readonly currency: string;
  readonly validFrom: string;
}

/** The contract of the sandbox merchant: like the provider's fees, except USD payins (30 fixed, not 25). */
export const SANDBOX_FEE_SCHEDULE: FeeScheduleEntry[] = [
  {
    product: 'IBT',
    transactionType: 'DEBIT',
    currency: 'CAD',
    fixedCents: 25,
    basisPoints: 30,
    rounding: 'floor',
    validFrom: '2000-01-01',
  },
  {
    product: 'IBT',
    transactionType: 'CREDIT',
    currency: 'CAD',
    fixedCents: 40,
    basisPoints: 30,
    rounding: 'floor',
    validFrom: '2000-01-01',
  },
  {
    product: 'IBT',
    transactionType: 'DEBIT',
    currency: 'USD',
    fixedCents: 30,
    basisPoints: 30,
    rounding: 'floor',
    validFrom: '2000-01-01',
  },
];

/** Plants the fee_vs_schedule discrepancy where the provider's fee is off the contract. */
export function checkFee(p: Planting, t: TransactionRecord): void {
  if (t.status !== 'SUCCESSFUL' || t.fee_cents === null) return;
  const rule = SANDBOX_FEE_SCHEDULE.find(
    (s) => s.product === t.product && s.transactionType === t.transaction_type && s.currency === t.currency,
  );
  if (!rule) return;
  const fee = contractedFeeCents(t.amount_cents, rule);
  if (fee !== t.fee_cents)
    expect(
      p,
      `fee_mismatch:fee_vs_schedule:${t.transaction_id}`,
      'fee_mismatch',
      fee,
      t.fee_cents,
      businessDateOf(t),
    );
}
