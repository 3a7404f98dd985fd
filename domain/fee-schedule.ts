/**
 * Contracted fees: fixed cents plus basis points of the amount, in integer arithmetic, rounded to the
 * cent as the contract says (half up by default, or floor) (amounts are never negative). The same formula runs in SQL in the matching rules
 * (`fixed_cents + (amount_cents * basis_points + 5000) / 10000` on bigints); this is its reference.
 */
export interface FeeRule {
  readonly fixedCents: number;
  readonly basisPoints: number;
  /** half_up (default): 0.5 cent and more rounds up; floor: the fraction is dropped. */
  readonly rounding?: 'half_up' | 'floor';
}

export function contractedFeeCents(amountCents: number, rule: FeeRule): number {
  if (!Number.isSafeInteger(amountCents) || amountCents < 0) {
    throw new RangeError(`fee of amount ${amountCents}: the amount must be a non-negative integer of cents`);
  }
  const product = BigInt(amountCents) * BigInt(rule.basisPoints);
  return rule.fixedCents + Number((product + (rule.rounding === 'floor' ? 0n : 5000n)) / 10000n);
}
