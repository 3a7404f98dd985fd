import { sql } from 'kysely';
import type { Rule } from './rule.ts';

/**
 * Provider adjustments (legacy query type 4) against the ledger's ADJUSTMENT entries. The provider
 * gives an adjustment no key of its own (adjustment_key is a hash of its fields and an occurrence
 * number), so an adjustment is booked by a ledger ADJUSTMENT entry of the same provider transaction
 * id, currency, signed amount and fee; of several identical adjustments, as many are booked as the
 * ledger has identical entries (the earliest first).
 */

/**
 * A ledger entry (l) that books adjustment `a`, but for the transaction id: that is compared apart,
 * as `=` or `is null`, so that each count is a probe of merchant_ledger_adjustment_txn_idx.
 */
const BOOKS = (a: string) =>
  sql.raw(`l.transaction_type = 'ADJUSTMENT' and l.status not in ('REJECTED','FAILED') and l.currency = ${a}.currency
    and l.amount_cents = ${a}.amount_cents and coalesce(l.fee_cents, 0) = coalesce(${a}.fee_cents, 0)`);

/** The adjustments of the scope (scope_adj, reconcile/rules/returns-scope.ts), numbered among the identical adjustments of their transaction, with how many the ledger booked. */
const ADJUSTMENTS = () => sql`(
  select a.*, case when a.transaction_id is null
      then (select count(*) from merchant_ledger l where ${BOOKS('a')} and l.transaction_id is null)
      else (select count(*) from merchant_ledger l where ${BOOKS('a')} and l.transaction_id = a.transaction_id)
    end as booked
  from (select a.adjustment_key, a.transaction_id, a.adjustment_type, a.amount_cents, a.fee_cents, a.currency,
          a.adjusted_on, a.notes,
          row_number() over (partition by a.transaction_id, a.currency, a.amount_cents, coalesce(a.fee_cents, 0)
            order by a.adjusted_on, a.adjustment_key) as nth
        from provider_adjustments a
        where a.transaction_id in (select transaction_id from scope_a)
           or a.adjustment_key in (select adjustment_key from scope_adj)) a
  where a.adjustment_key in (select adjustment_key from scope_adj)) a`;

/** adjustment_not_booked: a provider adjustment the ledger has no ADJUSTMENT entry for, after the grace period. */
export const adjustmentNotBooked: Rule = {
  name: 'adjustment_not_booked',
  rule: 'adjustment_vs_ledger',
  kinds: ['adjustment_not_booked'],
  reads: { from: ADJUSTMENTS, anchor: 'adjustment' },
  when: (ctx) => sql`a.nth > a.booked and a.adjusted_on <= ${ctx.dueThrough}::date`,
  select: () => ({
    discrepancy_key: `'adjustment_not_booked:' || a.adjustment_key`,
    transaction_id: 'a.transaction_id',
    business_date: 'a.adjusted_on',
    currency: 'a.currency',
    expected: `jsonb_build_object('adjustment_key', a.adjustment_key, 'transaction_id', a.transaction_id,
      'adjustment_type', a.adjustment_type, 'amount_cents', a.amount_cents, 'fee_cents', a.fee_cents,
      'currency', a.currency, 'adjusted_on', a.adjusted_on, 'notes', a.notes)`,
    // What the adjustment moves for the merchant: its amount less its fee (settlement_items.net_cents).
    expected_amount_cents: 'a.amount_cents - coalesce(a.fee_cents, 0)',
    candidates: `jsonb_build_object('ledger', coalesce((select jsonb_agg(l.merchant_transaction_id order by l.merchant_transaction_id)
      from merchant_ledger l where l.transaction_type = 'ADJUSTMENT' and l.transaction_id = a.transaction_id), '[]'::jsonb),
      'provider', jsonb_build_array(a.transaction_id))`,
  }),
};

export const ADJUSTMENT_RULES: readonly Rule[] = [adjustmentNotBooked];
