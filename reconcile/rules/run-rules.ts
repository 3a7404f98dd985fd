import { sql } from 'kysely';
import { claimTransactions, prepareFacts, STALE_CLAIMS, suspectRows } from './claims.ts';
import { keepReturnClaims, noteClaimMoves } from './claim-moves.ts';
import { NOTIFICATION_RULES } from './notifications.ts';
import { PENDING_RULES } from './pending.ts';
import { ADJUSTMENT_RULES } from './adjustments.ts';
import { RETURN_NOTIFICATION_RULES, claimReturnNotifications } from './return-notifications.ts';
import { RETURN_RULES, claimReturns } from './returns.ts';
import { SETTLEMENT_RULES } from './settlement.ts';
import { type Rule, ruleStatement, suspectsCondition } from './rule.ts';
import { noteLookedAt } from './looked-at.ts';
import { prepareScope } from './scope.ts';
import { SOURCE_RULES } from './sources.ts';
import { exec, type RuleContext } from './statement.ts';
import { TRANSACTION_RULES } from './transactions.ts';
import { analyzeWorkTables, createWorkTable, dropWorkTables } from './work-tables.ts';

/**
 * The matching rules, set-based SQL over the whole range at once, one file per family. Each rule
 * fills the run's temporary table `findings` with the discrepancies that hold now;
 * reconcile/apply-findings.ts turns them into the discrepancies lifecycle. Rules only ever produce
 * findings whose business date is in the range, so that a run can resolve exactly the open
 * discrepancies of its range.
 *
 * Matching is a function of the data, not of the order of runs: for a merchant transaction id, the
 * provider transaction that claims the ledger entry is chosen among all provider rows with that id
 * (agreeing amount, currency and type first, then SUCCESSFUL, then earliest, then smallest id).
 */
export const RULES: readonly Rule[] = [
  ...TRANSACTION_RULES,
  ...NOTIFICATION_RULES,
  ...RETURN_RULES,
  ...RETURN_NOTIFICATION_RULES,
  ...ADJUSTMENT_RULES,
  ...SOURCE_RULES,
  ...PENDING_RULES,
  // Last: it reads the findings of all the others (the open discrepancies that explain a day).
  ...SETTLEMENT_RULES,
];

export interface MatchCounts {
  readonly transactions: number;
  readonly returns: number;
  readonly notifications: number;
  readonly legacy: number;
}

/** Claims, then every rule, in the run's transaction: `findings` holds the range's discrepancies after it. */
export async function matchRange(ctx: RuleContext, rules: readonly Rule[] = RULES): Promise<MatchCounts> {
  const names = new Set<string>();
  for (const rule of rules) {
    if (names.has(rule.name))
      throw new Error(`two matching rules are named ${rule.name}: give each its own name`);
    names.add(rule.name);
  }
  await prepareScope(ctx);
  // A run over changed keys notes the discrepancies it looks at (reconcile/incremental.ts).
  if (ctx.scoped) await noteLookedAt(ctx, rules);
  // The rows the rules that read suspects can flag: exactly those for which one of their conditions
  // holds, so that they read a few percent of the range instead of scanning it once each; and the rows
  // whose claims facts no longer wants, which the claims read (claims.ts). A rule applies its own
  // condition to them, so a stale row is flagged only when that condition holds. facts keeps their
  // wide rows as it joins them (claims.ts), where the condition is evaluated by its parallel workers.
  // A work table (work-tables.ts): parallel workers share the scan of every fact (a TEMP table kept
  // it on one core).
  const stale = Object.values(STALE_CLAIMS).map((c) => sql`(${sql.raw(c)})`);
  await prepareFacts(ctx, sql`${suspectsCondition(rules, ctx)} or ${sql.join(stale, sql` or `)}`);
  await createWorkTable(ctx, 'suspects', suspectRows());
  await analyzeWorkTables(ctx, 'suspects');
  const claims = await claimTransactions(ctx);
  await keepReturnClaims(ctx);
  const returns = await claimReturns(ctx);
  await claimReturnNotifications(ctx);
  for (const rule of rules) {
    await rule.prepare?.(ctx);
    await exec(ctx, ruleStatement(rule, ctx));
  }
  // Claims that moved an item of another range's day (claim-moves.ts).
  await noteClaimMoves(ctx);
  await dropWorkTables(ctx);
  return { ...claims, returns };
}
