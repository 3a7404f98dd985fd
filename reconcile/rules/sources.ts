import type { Rule } from './rule.ts';
import { anyDiffers, differingFields, fieldCheck, type FieldCheck, statusCheck } from './sql-terms.ts';

/** JSON report rows against the legacy rows of the same transaction id (claimed in claims.ts: f.g_*). */

const LEGACY_CHECKS: readonly FieldCheck[] = [
  fieldCheck('amount_cents', 'g_amount'),
  fieldCheck('currency', 'g_currency'),
  statusCheck('status', 'g_status'),
  fieldCheck('fee_cents', 'g_fee'),
  fieldCheck('merchant_transaction_id', 'g_mtid'),
];
const amountDiffers = LEGACY_CHECKS[0]!.condition;

/** source_conflict: the two provider interfaces disagree about one transaction. */
export const sourceConflict: Rule = {
  name: 'source_conflict',
  rule: 'report_vs_legacy',
  kinds: ['source_conflict'],
  reads: { suspects: true },
  when: () => `f.g_id is not null and ${anyDiffers(LEGACY_CHECKS)}`,
  select: () => ({
    discrepancy_key: `'source_conflict:' || f.transaction_id`,
    transaction_id: 'f.transaction_id',
    merchant_transaction_id: 'f.merchant_transaction_id',
    business_date: 'f.transaction_on',
    currency: 'f.currency',
    expected: differingFields(LEGACY_CHECKS, 'report'),
    actual: differingFields(LEGACY_CHECKS, 'other'),
    expected_amount_cents: `case when ${amountDiffers} then f.amount_cents end`,
    actual_amount_cents: `case when ${amountDiffers} then f.g_amount end`,
    difference_cents: `case when ${amountDiffers} then f.g_amount - f.amount_cents end`,
    candidates: `jsonb_build_object('legacy', jsonb_build_array(f.g_id))`,
  }),
};

export const SOURCE_RULES: readonly Rule[] = [sourceConflict];
