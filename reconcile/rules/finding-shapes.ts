import type { Rule, RuleSelect } from './rule.ts';
import { anyDiffers, differingFields, type FieldCheck } from './sql-terms.ts';

/**
 * The parts of a finding that rules share, one builder each, so that a rule says only what is its
 * own: which row a finding is about (its key and the ids, date and currency of that row, per anchor:
 * rule.ts), the amounts of a disagreement, and a rule that compares a source's fields with the report.
 */

/** The columns that say which row a finding is about. */
type Subject = Pick<
  RuleSelect,
  | 'discrepancy_key'
  | 'transaction_id'
  | 'merchant_transaction_id'
  | 'return_transaction_id'
  | 'business_date'
  | 'currency'
>;

/**
 * The columns of a finding about a row that carries a transaction's ids and currency under their own
 * names (a provider transaction, a ledger entry, a notification), on the day `date`; all but its key.
 */
export function columnsOf(row: string, date: string): Omit<Subject, 'discrepancy_key'> {
  return {
    transaction_id: `${row}.transaction_id`,
    merchant_transaction_id: `${row}.merchant_transaction_id`,
    business_date: date,
    currency: `${row}.currency`,
  };
}

/**
 * A finding about a provider transaction (`row`: the suspects' `f`, or a row with its columns), keyed
 * `<key>:<transaction id>` (`key`: the kind, with a qualifier where two rules find the same kind:
 * `fee_mismatch:fee_vs_schedule`).
 */
export function aboutTransaction(key: string, row = 'f'): Subject {
  return {
    discrepancy_key: `'${key}:' || ${row}.transaction_id`,
    ...columnsOf(row, `${row}.transaction_on`),
  };
}

/**
 * missing_at_provider: the finding about a ledger entry `l` (of scope_l `s`) that the provider does
 * not know, on its booking day; its evidence is the entry: its id, type, amount, currency and booking
 * time, and `fields` (more jsonb fields, as SQL).
 */
export function missingAtProviderFinding(fields: string): RuleSelect {
  return {
    discrepancy_key: `'missing_at_provider:' || l.merchant_transaction_id`,
    ...columnsOf('l', 's.booked_on'),
    expected: `jsonb_build_object('merchant_transaction_id', l.merchant_transaction_id, 'transaction_type', l.transaction_type,
      ${fields}, 'amount_cents', l.amount_cents, 'currency', l.currency, 'booked_at', l.booked_at)`,
    expected_amount_cents: 'l.amount_cents',
    candidates: `jsonb_build_object('ledger', jsonb_build_array(l.merchant_transaction_id), 'provider', jsonb_build_array())`,
  };
}

/** A finding about the provider return `r`, keyed `<key>:<return transaction id>`, on its return day. */
export function aboutReturn(key: string): Subject {
  return {
    discrepancy_key: `'${key}:' || r.return_transaction_id`,
    transaction_id: 'r.original_transaction_id',
    merchant_transaction_id: 'r.merchant_transaction_id',
    return_transaction_id: 'r.return_transaction_id',
    business_date: 'r.returned_on',
    currency: 'r.currency',
  };
}

/**
 * The provider return `r` as a finding's evidence: its ids, amount, currency and return day, and
 * `fields` (more jsonb fields, as SQL).
 */
export function returnEvidence(fields: string): string {
  return `jsonb_build_object('return_transaction_id', r.return_transaction_id, 'original_transaction_id',
      r.original_transaction_id, 'amount_cents', r.amount_cents, 'currency', r.currency, 'returned_on', r.returned_on,
      ${fields})`;
}

/**
 * The amounts of a disagreement in cents: what was expected, what was found and the difference
 * (found less expected). With `when`, only on the rows where it holds (null on the others: a
 * finding about other fields has no amounts).
 */
export function amounts(
  expected: string,
  actual: string,
  when?: string,
): Pick<RuleSelect, 'expected_amount_cents' | 'actual_amount_cents' | 'difference_cents'> {
  const only = (value: string) => (when === undefined ? value : `case when ${when} then ${value} end`);
  return {
    expected_amount_cents: only(expected),
    actual_amount_cents: only(actual),
    difference_cents: only(`${actual} - ${expected}`),
  };
}

/**
 * A rule that compares the report row with another source's copy of it, field by field: it finds a
 * discrepancy when the copy is there (`present`) and any check disagrees; the finding holds the
 * fields that differ on each side, and the amounts when amount_cents is one of them.
 */
export function fieldChecksRule(r: {
  readonly rule: string;
  readonly kind: Rule['kinds'][number];
  readonly present: string;
  readonly checks: readonly FieldCheck[];
  readonly candidates: string;
}): Rule {
  const amount = r.checks.find((c) => c.field === 'amount_cents');
  return {
    name: r.kind,
    rule: r.rule,
    kinds: [r.kind],
    reads: { suspects: true },
    when: () => `${r.present} and ${anyDiffers(r.checks)}`,
    select: () => ({
      ...aboutTransaction(r.kind),
      expected: differingFields(r.checks, 'report'),
      actual: differingFields(r.checks, 'other'),
      ...(amount ? amounts(`f.${amount.field}`, `f.${amount.other}`, amount.condition) : {}),
      candidates: r.candidates,
    }),
  };
}
