import { sql } from 'kysely';
import type { DiscrepancyKind } from '../settings.ts';
import { aboutReturn, amounts, missingAtProviderFinding, returnEvidence } from './finding-shapes.ts';
import type { Rule } from './rule.ts';
import { exec, type RuleContext } from './statement.ts';
import { beyondTolerance, dueThroughFor } from './tolerance-terms.ts';

/** Provider returns against their original transaction and the ledger's RETURN entries. */

/**
 * Claims of the scope's returns (scope_r: reconcile/rules/scope.ts) in return_matches: the original transaction, and the ledger RETURN
 * entry found by the return transaction id first, else by the merchant transaction id of the
 * original; each entry is claimed once (UNIQUE), agreeing amounts first. Returns how many returns
 * claimed a ledger entry.
 */
export async function claimReturns(ctx: RuleContext): Promise<number> {
  await exec(
    ctx,
    sql`delete from return_matches where return_transaction_id in (select return_transaction_id from scope_r)`,
  );
  await exec(
    ctx,
    sql`create temp table return_candidates on commit drop as
      select r.return_transaction_id, c.ledger_mtid, c.rule, c.priority,
        row_number() over (partition by c.ledger_mtid
          order by c.priority, (c.amount_cents = r.amount_cents) desc, r.return_transaction_id) as claim
      from provider_returns r join scope_r using (return_transaction_id)
      left join provider_transactions o on o.transaction_id = r.original_transaction_id
      join lateral (
        select l.merchant_transaction_id as ledger_mtid, 'return_transaction_id' as rule, 1 as priority, l.amount_cents
        from merchant_ledger l where l.transaction_type = 'RETURN' and l.transaction_id = r.return_transaction_id
        union all
        select l.merchant_transaction_id, 'original_merchant_transaction_id', 2, l.amount_cents
        from merchant_ledger l where l.transaction_type = 'RETURN'
          and l.original_merchant_transaction_id = coalesce(r.merchant_transaction_id, o.merchant_transaction_id)
          and (l.transaction_id is null or l.transaction_id = r.return_transaction_id)
      ) c on true`,
  );
  await exec(
    ctx,
    sql`insert into return_matches (return_transaction_id, original_transaction_id, ledger_merchant_transaction_id, rule, run_id)
      select r.return_transaction_id, o.transaction_id, c.ledger_mtid, coalesce(c.rule, 'original_transaction_id'),
        ${ctx.runId}::bigint
      from provider_returns r join scope_r using (return_transaction_id)
      left join provider_transactions o on o.transaction_id = r.original_transaction_id
      left join lateral (
        select rc.ledger_mtid, rc.rule from return_candidates rc
        where rc.return_transaction_id = r.return_transaction_id and rc.claim = 1
        order by rc.priority, rc.ledger_mtid limit 1
      ) c on true
      on conflict do nothing`,
  );
  // A return claimed before its original was loaded (a backfill's windows finish in any order) is
  // linked to the original when the original's range is matched.
  await exec(
    ctx,
    sql`update return_matches m set original_transaction_id = r.original_transaction_id
      from provider_returns r join scope_p p on p.transaction_id = r.original_transaction_id
      where m.return_transaction_id = r.return_transaction_id and m.original_transaction_id is null`,
  );
  const count = await sql<{ n: number }>`select count(*)::int as n
      from return_matches m join scope_r using (return_transaction_id)
      where m.ledger_merchant_transaction_id is not null`.execute(ctx.trx);
  return count.rows[0]?.n ?? 0;
}

const RETURNED = `return_matches m join scope_r using (return_transaction_id) join provider_returns r using (return_transaction_id)`;
const BOOKED = `${RETURNED} join merchant_ledger l on l.merchant_transaction_id = m.ledger_merchant_transaction_id`;

/** return_not_booked: a provider return with no ledger RETURN entry once the grace period has run out. */
export const returnNotBooked: Rule = {
  name: 'return_not_booked',
  rule: 'return_vs_ledger',
  kinds: ['return_not_booked'],
  reads: { from: () => RETURNED, anchor: 'return' },
  when: (ctx) =>
    sql`m.ledger_merchant_transaction_id is null and r.returned_on <= ${dueThroughFor(ctx, 'r.currency')}`,
  select: () => ({
    ...aboutReturn('return_not_booked'),
    expected: returnEvidence(`'return_code', r.return_code`),
    expected_amount_cents: 'r.amount_cents',
    candidates: `jsonb_build_object('ledger', jsonb_build_array(), 'original', jsonb_build_array(m.original_transaction_id))`,
  }),
};

/** A field of a claimed return/ledger pair that disagrees. */
function bookedReturnRule(kind: DiscrepancyKind, field: 'amount_cents' | 'currency'): Rule {
  return {
    name: `return_${kind}`,
    rule: 'return_vs_ledger',
    kinds: [kind],
    reads: { from: () => BOOKED, anchor: 'return' },
    when: (ctx) =>
      field === 'amount_cents'
        ? beyondTolerance(ctx, 'l.amount_cents', 'r.amount_cents', 'r.currency')
        : `l.${field} <> r.${field}`,
    select: () => ({
      ...aboutReturn(`${kind}:return`),
      // The ledger RETURN entry the return was matched with.
      merchant_transaction_id: 'l.merchant_transaction_id',
      expected: `jsonb_build_object('${field}', r.${field})`,
      actual: `jsonb_build_object('${field}', l.${field})`,
      ...amounts('r.amount_cents', 'l.amount_cents'),
      candidates: `jsonb_build_object('ledger', jsonb_build_array(l.merchant_transaction_id),
        'original', jsonb_build_array(m.original_transaction_id))`,
    }),
  };
}

export const returnAmountMismatch = bookedReturnRule('amount_mismatch', 'amount_cents');
export const returnCurrencyMismatch = bookedReturnRule('currency_mismatch', 'currency');

/** missing_at_provider: a booked RETURN the provider never reported, once the grace period has run out. */
export const returnMissingAtProvider: Rule = {
  name: 'return_missing_at_provider',
  rule: 'ledger_return_vs_provider',
  kinds: ['missing_at_provider'],
  reads: { from: () => 'scope_l s join merchant_ledger l using (merchant_transaction_id)', anchor: 'ledger' },
  // A return of the original, by its own merchant transaction id or else by its original's: two
  // index lookups (a coalesce() of both sides would read every provider return, and scanning the
  // ledger for RETURN entries would read it all at every run).
  when: (ctx) => sql`s.transaction_type = 'RETURN' and s.booked_on <= ${dueThroughFor(ctx, 'l.currency')}
    and not exists (select 1 from provider_returns r where r.return_transaction_id = l.transaction_id)
    and not exists (select 1 from return_matches m where m.ledger_merchant_transaction_id = l.merchant_transaction_id)
    and not (l.transaction_id is null and (
      exists (select 1 from provider_returns r
              where r.merchant_transaction_id = l.original_merchant_transaction_id)
      or exists (select 1 from provider_transactions o
                 join provider_returns r on r.original_transaction_id = o.transaction_id
                 where o.merchant_transaction_id = l.original_merchant_transaction_id
                   and r.merchant_transaction_id is null)))`,
  select: () => ({
    ...missingAtProviderFinding(`'original_merchant_transaction_id', l.original_merchant_transaction_id`),
    // A RETURN entry's transaction id is the provider's return id.
    return_transaction_id: 'l.transaction_id',
  }),
};

export const RETURN_RULES: readonly Rule[] = [
  returnNotBooked,
  returnAmountMismatch,
  returnCurrencyMismatch,
  returnMissingAtProvider,
];
