import { sql } from 'kysely';
import type { DiscrepancyKind } from '../settings.ts';
import { aboutTransaction, amounts, missingAtProviderFinding } from './finding-shapes.ts';
import type { Rule } from './rule.ts';
import { manuallyMatched } from './manual-matches.ts';
import { keyJoin, statusClass } from './sql-terms.ts';
import { beyondTolerance, dueThroughFor } from './tolerance-terms.ts';
import type { RuleContext } from './statement.ts';
import { analyzeWorkTables, createWorkTable } from './work-tables.ts';

/** Provider transactions against ledger DEBIT/CREDIT entries, and against the fee schedule. */

const bothSides = `jsonb_build_object('ledger', jsonb_build_array(f.l_mtid), 'provider', jsonb_build_array(f.transaction_id))`;

/** missing_in_ledger: money moved (or may move) and the merchant has no entry. */
export const missingInLedger: Rule = {
  name: 'missing_in_ledger',
  rule: 'transaction_vs_ledger',
  kinds: ['missing_in_ledger'],
  reads: { suspects: true },
  // Rank 1 is joined with the ledger entry of its merchant transaction id (claims.ts): none, if l_mtid
  // is null; mm_id is the manual match that pairs it instead.
  when: () =>
    `f.rank = 1 and f.l_mtid is null and f.mm_id is null and (f.status is null or f.status in ('SUCCESSFUL','PENDING','RETURNED'))`,
  select: () => ({
    ...aboutTransaction('missing_in_ledger'),
    expected: `jsonb_build_object('transaction_id', f.transaction_id, 'merchant_transaction_id', f.merchant_transaction_id,
      'transaction_type', f.transaction_type, 'status', f.status, 'amount_cents', f.amount_cents, 'currency', f.currency)`,
    expected_amount_cents: 'f.amount_cents',
    candidates: `jsonb_build_object('ledger', jsonb_build_array(), 'provider', jsonb_build_array(f.transaction_id))`,
  }),
};

/** duplicate_merchant_transaction: a provider row whose merchant transaction id another row claims. */
export const duplicateMerchantTransaction: Rule = {
  name: 'duplicate_merchant_transaction',
  rule: 'merchant_transaction_id_unique',
  kinds: ['duplicate_merchant_transaction'],
  reads: {
    suspects: true,
    join: 'join ranked first on first.mtid = f.merchant_transaction_id and first.rank = 1',
  },
  // A payin the provider debits again after its return (a representment, return-notifications.ts)
  // reuses the merchant transaction id by design: it is not a duplicate (redebits, returns-scope.ts).
  // 'not in' a set (neither side is ever null), not a correlated 'not exists': the suspects' condition
  // includes this one, and a correlated subquery anywhere keeps a statement's scan out of parallel
  // workers (the suspects' scan of every fact ran on one core).
  when: () => `f.rank > 1 and f.transaction_id not in (select transaction_id from redebits)`,
  select: () => ({
    ...aboutTransaction('duplicate_merchant_transaction'),
    expected: `jsonb_build_object('transaction_id', first.transaction_id, 'merchant_transaction_id', f.merchant_transaction_id)`,
    actual: `jsonb_build_object('transaction_id', f.transaction_id, 'amount_cents', f.amount_cents, 'status', f.status)`,
    actual_amount_cents: 'f.amount_cents',
    candidates: `jsonb_build_object('provider', (select jsonb_agg(o.transaction_id order by o.rank) from ranked o
      where o.mtid = f.merchant_transaction_id))`,
  }),
};

/** A field of a claimed provider/ledger pair that disagrees; business date of the provider row. */
function pairRule(
  kind: DiscrepancyKind,
  condition: string | ((ctx: RuleContext) => string),
  expected: string,
  actual: string,
): Rule {
  return {
    name: kind,
    rule: 'transaction_vs_ledger',
    kinds: [kind],
    reads: { suspects: true },
    when: (ctx) => `f.l_mtid is not null and ${typeof condition === 'string' ? condition : condition(ctx)}`,
    select: () => ({
      ...aboutTransaction(kind),
      // The ledger's side of the pair: the entry the claims paired it with.
      merchant_transaction_id: 'f.l_mtid',
      expected: `jsonb_build_object(${expected})`,
      actual: `jsonb_build_object(${actual})`,
      ...amounts('f.amount_cents', 'f.l_amount'),
      candidates: bothSides,
    }),
  };
}

export const amountMismatch = pairRule(
  'amount_mismatch',
  // Within the account's amount tolerance for the currency, the amounts are equal.
  (ctx) => beyondTolerance(ctx, 'f.l_amount', 'f.amount_cents', 'f.currency'),
  `'amount_cents', f.amount_cents`,
  `'amount_cents', f.l_amount`,
);
export const currencyMismatch = pairRule(
  'currency_mismatch',
  'f.currency <> f.l_currency',
  `'currency', f.currency`,
  `'currency', f.l_currency`,
);
export const typeMismatch = pairRule(
  'type_mismatch',
  'f.transaction_type is not null and f.transaction_type <> f.l_type',
  `'transaction_type', f.transaction_type`,
  `'transaction_type', f.l_type`,
);
export const statusMismatch = pairRule(
  'status_mismatch',
  `${statusClass('f.status')} <> ${statusClass('f.l_status')}`,
  `'status', f.status, 'raw_status', f.raw_status`,
  `'status', f.l_status`,
);

/**
 * missing_at_provider: a booked DEBIT/CREDIT the provider does not know once the grace period has run
 * out (a provider row of its id that a person matched with other entries does not count), and that no
 * manual match pairs with provider transactions. The provider rows of the run (facts, mm_id: not
 * matched by hand) answer for nearly every entry first, in a work table of the scope's entries they do
 * not answer for (unanswered_l), written by parallel workers: the rule's own insert runs on one core
 * (an INSERT never runs in parallel), and there the anti join of the range's ledger with every fact
 * took 1.6 s of a first run over 1,000,000 rows. Only the few left are looked up among every provider
 * row, by key: asked of every row at once, the planner hashed the whole ledger against every provider
 * transaction of the warehouse (12 s of a preview over 1,000,000 rows). A full run's scope_l already
 * flags the entries no provider row of the range answers for (scope.ts: the rows of scope_p are those
 * of facts), so there unanswered_l is those rows.
 */
export const missingAtProvider: Rule = {
  name: 'missing_at_provider',
  rule: 'ledger_vs_provider',
  kinds: ['missing_at_provider'],
  reads: {
    from: () => 'unanswered_l s join merchant_ledger l using (merchant_transaction_id)',
    anchor: 'ledger',
  },
  prepare: async (ctx) => {
    // A full run's scope_l knows which of its entries no provider row answers for (scope.ts).
    await createWorkTable(
      ctx,
      'unanswered_l',
      ctx.scoped
        ? sql`select s.* from scope_l s where not exists (select 1 from facts f
            where f.merchant_transaction_id = s.merchant_transaction_id and f.mm_id is null)`
        : sql`select s.* from scope_l s where s.unanswered`,
    );
    await analyzeWorkTables(ctx, 'unanswered_l');
  },
  when: (ctx) => sql`l.transaction_type in ('DEBIT','CREDIT') and l.status not in ('REJECTED','FAILED')
    and s.booked_on <= ${dueThroughFor(ctx, 'l.currency')}
    and not exists (select 1 from provider_transactions p where ${sql.raw(keyJoin('p', 'l', 'merchant_transaction_id'))}
      and not ${sql.raw(manuallyMatched('provider', 'p.transaction_id'))})
    and not ${sql.raw(manuallyMatched('ledger', 'l.merchant_transaction_id'))}`,
  select: () => ({
    ...missingAtProviderFinding(`'status', l.status`),
  }),
};

/**
 * fee_mismatch against the contracted schedule, for successful transactions with a reported fee:
 * reads every fact of the range (the schedule is not in the facts), the latest schedule row that
 * applies to each.
 */
export const feeVsSchedule: Rule = {
  name: 'fee_vs_schedule',
  rule: 'fee_vs_schedule',
  kinds: ['fee_mismatch'],
  reads: {
    from: () => `(
      select distinct on (f.transaction_id) f.transaction_id, f.merchant_transaction_id, f.transaction_on, f.currency,
        f.amount_cents, f.fee_cents, s.fixed_cents, s.basis_points, s.rounding,
        s.fixed_cents + (f.amount_cents * s.basis_points + case when s.rounding = 'floor' then 0 else 5000 end) / 10000 as expected_fee,
        s.product || '/' || s.transaction_type || '/' || s.currency || '/' || s.valid_from as schedule_key
      from facts f
      join fee_schedule s on s.product = f.product and s.transaction_type = f.transaction_type
        and s.currency = f.currency and f.transaction_on >= s.valid_from
        and (s.valid_to is null or f.transaction_on <= s.valid_to)
      where f.status = 'SUCCESSFUL' and f.fee_cents is not null
      order by f.transaction_id, s.valid_from desc
    ) x`,
    anchor: 'transaction',
  },
  when: (ctx) => beyondTolerance(ctx, 'x.fee_cents', 'x.expected_fee', 'x.currency'),
  select: () => ({
    ...aboutTransaction('fee_mismatch:fee_vs_schedule', 'x'),
    expected: `jsonb_build_object('fee_cents', x.expected_fee, 'fixed_cents', x.fixed_cents, 'basis_points', x.basis_points,
      'rounding', x.rounding, 'amount_cents', x.amount_cents)`,
    actual: `jsonb_build_object('fee_cents', x.fee_cents)`,
    ...amounts('x.expected_fee', 'x.fee_cents'),
    candidates: `jsonb_build_object('fee_schedule', jsonb_build_array(x.schedule_key))`,
  }),
};

export const TRANSACTION_RULES: readonly Rule[] = [
  missingInLedger,
  duplicateMerchantTransaction,
  amountMismatch,
  currencyMismatch,
  typeMismatch,
  statusMismatch,
  missingAtProvider,
  feeVsSchedule,
];
