import { type RawBuilder, sql } from 'kysely';
import type { Rule } from './rule.ts';
import type { RuleContext } from './statement.ts';

/**
 * The settlement roll-forward (migration 0016: settlement_items, daily_settlement_totals): per
 * Eastern day and currency, the provider's net against the ledger's. The difference is explained by
 * the movements that an open discrepancy names (either side of a pair: a transaction and the ledger
 * entry it claims, a return and its booking); what is left, the remainder nothing explains, is a
 * discrepancy of its own. This rule runs after every other: the open discrepancies of the range are
 * the run's findings; those of other days that are still open count too.
 */

/** The keys by which the discrepancies of `source` name settlement items (one id per item, see settlement_items). */
function namedKeys(source: string, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const from = sql.raw(source);
  return sql`select 'T:' || transaction_id as key from ${from}
      where ${where} and transaction_id is not null and return_transaction_id is null
    union all select 'M:' || merchant_transaction_id from ${from} where ${where} and merchant_transaction_id is not null
    union all select 'R:' || return_transaction_id from ${from} where ${where} and return_transaction_id is not null
    union all select 'A:' || substr(discrepancy_key, ${ADJUSTMENT_PREFIX.length + 1}) from ${from}
      where ${where} and kind = 'adjustment_not_booked'`;
}

const ADJUSTMENT_PREFIX = 'adjustment_not_booked:';

/** The key an item is named by: its one id (settlement_items fills one of the four). */
const ITEM_KEY = `coalesce('T:' || i.transaction_id, 'M:' || i.merchant_transaction_id,
  'R:' || i.return_transaction_id, 'A:' || i.adjustment_key)`;

/** The range's days of the run's account: both nets, the difference, the part explained, the remainder. */
const DAYS = (ctx: RuleContext) => {
  const others = sql`resolved_at is null and business_date not between ${ctx.from}::date and ${ctx.to}::date`;
  return sql`(
  select business_date, currency,
    coalesce(sum(net_cents) filter (where side = 'provider'), 0)::bigint as provider_net,
    coalesce(sum(net_cents) filter (where side = 'ledger'), 0)::bigint as ledger_net,
    coalesce(sum(signed), 0)::bigint as difference,
    coalesce(sum(signed) filter (where pair_disputed), 0)::bigint as explained,
    coalesce(sum(signed) filter (where not pair_disputed), 0)::bigint as unexplained
  from (select i.*, case when i.side = 'provider' then i.net_cents else -i.net_cents end as signed,
          bool_or(k.key is not null) over (partition by i.business_date, i.pair_key) as pair_disputed
        from public.settlement_items i
        left join (select distinct key from (${namedKeys('findings', sql`true`)}
          union all ${namedKeys('discrepancies', others)}) k0) k on k.key = ${sql.raw(ITEM_KEY)}
        where i.account = current_setting('recon.run_account')
          and i.business_date between ${ctx.from}::date and ${ctx.to}::date) i
  group by business_date, currency) s`;
};

/** settlement_unexplained: a day whose provider and ledger nets differ by more than its open discrepancies explain. */
export const settlementUnexplained: Rule = {
  name: 'settlement_unexplained',
  rule: 'settlement_roll_forward',
  kinds: ['settlement_unexplained'],
  reads: { from: DAYS },
  when: (ctx) => sql`s.unexplained <> 0 and s.business_date <= ${ctx.dueThrough}::date`,
  select: () => ({
    discrepancy_key: `'settlement_unexplained:' || s.business_date || ':' || s.currency`,
    business_date: 's.business_date',
    currency: 's.currency',
    expected: `jsonb_build_object('provider_net_cents', s.provider_net, 'ledger_net_cents', s.ledger_net,
      'difference_cents', s.difference, 'explained_cents', s.explained)`,
    actual: `jsonb_build_object('unexplained_cents', s.unexplained)`,
    difference_cents: 's.unexplained',
    candidates: `jsonb_build_object('settlement', jsonb_build_array(s.business_date || ':' || s.currency))`,
  }),
};

export const SETTLEMENT_RULES: readonly Rule[] = [settlementUnexplained];
