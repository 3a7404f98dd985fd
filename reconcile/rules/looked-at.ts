import { type RawBuilder, sql } from 'kysely';
import { anchorOf, type Anchor, type Rule } from './rule.ts';
import { exec, type RuleContext } from './statement.ts';

/**
 * Fills the temporary table looked_at with the discrepancies a run over changed keys looked at:
 * those whose row (by the rule's anchor) was in its scope or among the changed keys (a row that left
 * the range or was deleted), those of the dates it looked at whole (flagged_days), and those of rules
 * the code no longer has. Each part is an index lookup by key, date or rule: the range's other
 * discrepancies are not read. A discrepancy two parts find is there twice: its readers take it as a
 * set (`in`, `= any`, `except`), and the parts are appended (`union all`), not made distinct, which
 * hashed them in a table sized for the planner's estimates of every part (16 MB): 93 ms of CPU a
 * run against 3 ms for one changed entry at 1,000,000 rows (docs/benchmark-record.md §1).
 */
export async function noteLookedAt(ctx: RuleContext, rules: readonly Rule[]): Promise<void> {
  const byAnchor = new Map<Anchor, string[]>();
  const anchorOfRule = new Map<string, Anchor>();
  for (const r of rules) {
    const anchor = anchorOf(r);
    const other = anchorOfRule.get(r.rule);
    if (other !== undefined && other !== anchor)
      throw new Error(
        `matching rule ${r.rule} is about a ${other} in one builder and a ${anchor} in another`,
      );
    anchorOfRule.set(r.rule, anchor);
    byAnchor.set(anchor, [...new Set([...(byAnchor.get(anchor) ?? []), r.rule])]);
  }
  const column: Record<Anchor, string> = {
    transaction: 'transaction_id',
    ledger: 'merchant_transaction_id',
    return: 'return_transaction_id',
    notified: 'return_transaction_id',
    representment: 'return_transaction_id',
    adjustment: 'transaction_id',
    day: 'business_date',
  };
  // The scope table of each anchor (scope.ts, returns-scope.ts), and the changed keys (a row that
  // left the range or was deleted).
  const scoped: Record<Anchor, RawBuilder<unknown>> = {
    transaction: sql`select transaction_id from scope_p union select key from changed_t`,
    ledger: sql`select merchant_transaction_id from scope_l union select key from changed_m`,
    return: sql`select return_transaction_id from scope_r union select key from changed_r`,
    notified: sql`select transaction_id from scope_n union select key from changed_r`,
    representment: sql`select return_transaction_id from scope_x union select key from changed_r`,
    adjustment: sql`select transaction_id from scope_a union select key from changed_t`,
    day: sql`select business_date from scope_days`,
  };
  // One index probe per key, date or rule (lateral, offset 0), whatever the planner's estimates of
  // the run's small tables: a join chosen on them read every discrepancy of a rule.
  const probe = (keys: RawBuilder<unknown>, condition: RawBuilder<unknown>) =>
    sql`select d.discrepancy_id from (${keys}) k(key)
      cross join lateral (select d.discrepancy_id from discrepancies d where ${condition} offset 0) d`;
  // Keys: one scan of the key's own index over the sorted keys (`= any` of an array), the rule
  // filtered after; a lateral probe per key took 6 s for 20,000 changed keys.
  const parts = [...byAnchor].map(([anchor, names]) =>
    anchor === 'day'
      ? probe(scoped[anchor], sql`d.business_date = k.key and d.rule in (${sql.join(names)})`)
      : sql`select d.discrepancy_id from discrepancies d
          where d.${sql.id(column[anchor])} = any (array(${scoped[anchor]})) and d.rule in (${sql.join(names)})`,
  );
  // An adjustment without a transaction id is looked at by every run (returns-scope.ts).
  const adjustmentRules = [...byAnchor].filter(([a]) => a === 'adjustment').flatMap(([, names]) => names);
  if (adjustmentRules.length > 0)
    parts.push(
      probe(
        sql`select null::text`,
        sql`d.transaction_id is null and d.rule in (${sql.join(adjustmentRules)})`,
      ),
    );
  const everyRow = probe(sql`select business_date from flagged_days`, sql`d.business_date = k.key`);
  // The rules the warehouse's discrepancies name, one index probe each (a loose scan of
  // discrepancies_rule_day_idx, led by the rule: migration 0044); those of rules the code no longer has are looked at.
  const unknownRule = probe(
    sql`with recursive r(rule) as (select min(rule) from discrepancies
        union all select (select min(x.rule) from discrepancies x where x.rule > r.rule) from r where r.rule is not null)
      select rule from r where rule is not null and rule not in (${sql.join([...anchorOfRule.keys()])})`,
    sql`d.rule = k.key`,
  );
  await exec(
    ctx,
    sql`create temp table looked_at on commit drop as
      ${sql.join([...parts, everyRow, unknownRule], sql` union all `)}`,
  );
  await exec(ctx, sql`analyze looked_at`);
}
