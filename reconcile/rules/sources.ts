import type { Rule } from './rule.ts';
import { fieldChecksRule } from './finding-shapes.ts';
import { fieldCheck, type FieldCheck, statusCheck } from './sql-terms.ts';

/** JSON report rows against the legacy rows of the same transaction id (claimed in claims.ts: f.g_*). */

const LEGACY_CHECKS: readonly FieldCheck[] = [
  fieldCheck('amount_cents', 'g_amount'),
  fieldCheck('currency', 'g_currency'),
  statusCheck('status', 'g_status'),
  fieldCheck('fee_cents', 'g_fee'),
  fieldCheck('merchant_transaction_id', 'g_mtid'),
];

/** source_conflict: the two provider interfaces disagree about one transaction. */
export const sourceConflict: Rule = fieldChecksRule({
  rule: 'report_vs_legacy',
  kind: 'source_conflict',
  present: 'f.g_id is not null',
  checks: LEGACY_CHECKS,
  candidates: `jsonb_build_object('legacy', jsonb_build_array(f.g_id))`,
});

export const SOURCE_RULES: readonly Rule[] = [sourceConflict];
