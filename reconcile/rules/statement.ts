import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../../db/database.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import type { ReconcileSettings } from '../settings.ts';

/** What every step and rule of one run sees: its transaction, range, instant and settings. */
export interface RuleContext {
  readonly trx: Transaction<Database>;
  readonly from: string;
  readonly to: string;
  readonly asOf: string;
  readonly runId: number;
  readonly settings: ReconcileSettings;
  /**
   * The last Eastern date whose grace period has run out at asOf (YYYY-MM-DD): dates of the range up
   * to it are due. One date stands for the list of due dates, which made the run quadratic in the
   * length of the range.
   */
  readonly dueThrough: string;
  /**
   * The last Eastern date whose transactions, still PENDING at asOf, have been so for
   * settings.stuckPendingBusinessDays business days or more (stuck_pending).
   */
  readonly stuckThrough: string;
  /**
   * The run looks only at what the keys changed since its dates were last matched reach (the
   * temporary tables changed_t, changed_m, changed_r and flagged_days, filled by
   * reconcile/incremental.ts); otherwise at every row of the range.
   */
  readonly scoped?: boolean;
  /**
   * In a run over changed keys, the discrepancies of the range it does not look at that were found
   * when last looked at (`select * from discrepancies d where …`): with `findings`, the range's
   * discrepancies, which explain the roll-forward's days (reconcile/rules/settlement.ts).
   */
  readonly unseen?: RawBuilder<unknown>;
  /** The account's tolerances (reconcile/rules/tolerance-terms.ts); absent: exact matching. */
  readonly tolerances?: RunTolerances;
  /**
   * The run is read and rolled back (a preview: reconcile/tolerances/preview.ts): it writes only what
   * its rules read (findings, the return claims), not the transaction, notification and legacy claims
   * nor the stored findings a later run could reuse, which nobody would see.
   */
  readonly dryRun?: boolean;
}

/** One currency's tolerance as a run uses it: dueThrough is the run's due date with the date lag. */
export interface RunTolerance {
  readonly currency: string;
  readonly amountCents: number;
  readonly writeOffLimitCents: number;
  readonly dateLagBusinessDays: number;
  /** The last Eastern date due at asOf for this currency: the grace period plus the date lag. */
  readonly dueThrough: string;
}

/** What a run matched with: the version of the account's tolerances and its non-zero currencies. */
export interface RunTolerances {
  readonly version: number;
  readonly currencies: readonly RunTolerance[];
}

const PROFILE_STATEMENTS = PROFILE === '1' || PROFILE === 'explain';

/** Runs one statement of the run in its transaction (see execStatement). */
export function exec(ctx: RuleContext, query: RawBuilder<unknown>): Promise<number> {
  return execStatement(ctx.trx, query);
}

/**
 * Runs one statement of a run. RECON_PROFILE=1 prints its time; RECON_PROFILE=explain runs it as
 * `explain (analyze, buffers)` instead (which executes it too, so the run goes on unchanged) and
 * prints the plan: the buffers of each node show what the statement read.
 */
export async function execStatement(trx: Transaction<Database>, query: RawBuilder<unknown>): Promise<number> {
  const t0 = PROFILE_STATEMENTS ? performance.now() : 0;
  const compiled = query.compile(trx);
  if (
    PROFILE === 'explain' &&
    /^\s*(select|insert|update|delete|with|create temp table \w+ on commit drop as|create unlogged table [\w.]+ as)\b/i.test(
      compiled.sql,
    )
  ) {
    const plan = await trx.executeQuery<{ 'QUERY PLAN': string }>({
      ...compiled,
      sql: `explain (analyze, buffers, costs off, timing off) ${compiled.sql}`,
    });
    writeProfileLine(t0, compiled.sql.replace(/\s+/g, ' ').slice(0, 160));
    process.stderr.write(`${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
    return 0;
  }
  const result = await query.execute(trx);
  if (PROFILE_STATEMENTS) {
    writeProfileLine(t0, compiled.sql.replace(/\s+/g, ' ').slice(0, 90));
  }
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Whether the run's account holds any row of `table` (its rows only, through the run's account scope,
 * reconcile/account-scope.ts): the first entry of the account's key, in `keyOrder`, the order of that
 * key after the account (the view's filter), so that the answer is one index probe, never a scan of
 * the table, whatever the other accounts hold (reconcile-window-cost). Not `exists (...)`, whose
 * subquery the planner strips of its order and limit. A first run asks it to leave out the statements
 * whose answer it knows (claims.ts, apply-findings.ts; docs/benchmark-record.md §2).
 */
export async function accountHoldsAny(
  trx: Transaction<Database>,
  table: string,
  keyOrder: string,
): Promise<boolean> {
  const r = await sql`select 1 from ${sql.table(table)} order by ${sql.raw(keyOrder)} limit 1`.execute(trx);
  return r.rows.length > 0;
}
