import type { Rule } from '../../reconcile/rules/rule.ts';
import type { RuleContext } from '../../reconcile/rules/statement.ts';

/**
 * A rule that reports what a run sees while it runs (its work tables, their statistics), as one
 * finding on the run's first day: its key is the rule's name and the values of `columns`, joined by
 * colons, read from `from` (a from clause whose alias is x). Tests add it to RULES to look inside the
 * run's transaction, where nothing else can.
 */
export function probeRule(
  name: string,
  from: (ctx: RuleContext) => string,
  columns: readonly string[],
): Rule {
  return {
    name,
    rule: name,
    kinds: ['amount_mismatch'],
    reads: { from, anchor: 'transaction' },
    when: () => 'true',
    select: (ctx) => ({
      discrepancy_key: [`'${name}'`, ...columns.map((c) => `x.${c}`)].join(` || ':' || `),
      business_date: `'${ctx.from}'::date`,
    }),
  };
}
