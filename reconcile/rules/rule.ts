import { type RawBuilder, sql } from 'kysely';
import type { DiscrepancyKind } from '../settings.ts';
import { type FindingSelect, insertFindings } from './findings.ts';
import type { RuleContext } from './statement.ts';
import { type Sql, toSql } from './sql-terms.ts';

/**
 * The row a rule's discrepancy is about, and so the run's scope table the rule reads and the column
 * of the discrepancy that names that row: `transaction` a provider transaction of scope_p or facts
 * (discrepancies.transaction_id), `ledger` a ledger entry of scope_l (merchant_transaction_id),
 * `return` a provider return of scope_r (return_transaction_id); and, with the scope tables of
 * reconcile/rules/returns-scope.ts, `notified` a transaction id a return notification names (scope_n,
 * return_transaction_id), `representment` a return by its next action date (scope_x,
 * return_transaction_id), `adjustment` the provider transaction of an adjustment (scope_a,
 * transaction_id, or none), `day` a day of the roll-forward (scope_days, business_date). A run over the
 * changed keys only (reconcile/incremental.ts) resolves a discrepancy only when its row was in the scope.
 */
export type Anchor =
  'transaction' | 'ledger' | 'return' | 'notified' | 'representment' | 'adjustment' | 'day';

/** The anchor of a rule: a rule that reads the suspects is about a provider transaction. */
export function anchorOf(rule: Rule): Anchor {
  return 'suspects' in rule.reads ? 'transaction' : rule.reads.anchor;
}

/** A finding without its rule, which the rule supplies; `kind` too when the rule has only one. */
export type RuleSelect = Omit<FindingSelect, 'rule' | 'kind'> & { readonly kind?: Sql };

/**
 * One matching rule: the rows it reads, the condition under which it finds a discrepancy (stated
 * once), and the finding it writes. Most rules read the run's `suspects` (as `f`): the provider
 * transactions of the range, one wide row each (WIDE_FACTS, claims.ts), for which at least one of
 * those rules' conditions holds. That filter is built from the rules' own `when`, so a rule cannot be left
 * out of it.
 */
export interface Rule {
  /** The builder's name, unique among the rules. */
  readonly name: string;
  /** The rule recorded on its discrepancies (workbench/rules-in-words.ts explains each). */
  readonly rule: string;
  readonly kinds: readonly DiscrepancyKind[];
  /**
   * `suspects`: one row per suspect provider transaction, as `f`, with `join` appended (more tables
   * the finding needs, never a filter). Otherwise the rule's own from clause, which reads the run's
   * scope table of its `anchor` (below).
   */
  readonly reads:
    | { readonly suspects: true; readonly join?: string }
    | { readonly from: (ctx: RuleContext) => Sql; readonly anchor: Anchor };
  /** When the rule finds a discrepancy in a row it reads. */
  readonly when: (ctx: RuleContext) => Sql;
  readonly select: (ctx: RuleContext) => RuleSelect;
  /**
   * Statements run just before the rule's own, in the run's transaction: the temporary tables its
   * from clause reads, analyzed, when a plan needs their real size (what the rules before it found,
   * tables written earlier in the run).
   */
  readonly prepare?: (ctx: RuleContext) => Promise<void>;
}

export function readsSuspects(rule: Rule): boolean {
  return 'suspects' in rule.reads;
}

/** The rule's statement: insert into findings (…) select … from what it reads where its condition. */
export function ruleStatement(rule: Rule, ctx: RuleContext): RawBuilder<unknown> {
  const chosen = rule.select(ctx);
  const kind = chosen.kind ?? (rule.kinds.length === 1 ? sql.lit(rule.kinds[0]!) : undefined);
  if (kind === undefined)
    throw new Error(`matching rule ${rule.name} has several kinds: its select must give kind`);
  const from = 'suspects' in rule.reads ? `suspects f ${rule.reads.join ?? ''}` : rule.reads.from(ctx);
  return insertFindings({ ...chosen, kind, rule: sql.lit(rule.rule) }, from, rule.when(ctx));
}

/**
 * The condition of the suspects table: any rule that reads the suspects would find something in
 * this wide row (facts evaluates it as it joins each row: claims.ts). The disjunction of those rules'
 * own conditions, so it is exact and complete.
 */
export function suspectsCondition(rules: readonly Rule[], ctx: RuleContext): RawBuilder<unknown> {
  const conditions = rules.filter(readsSuspects).map((r) => sql`(${toSql(r.when(ctx))})`);
  return conditions.length === 0 ? sql`false` : sql.join(conditions, sql` or `);
}
