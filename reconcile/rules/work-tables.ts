import { type RawBuilder, sql } from 'kysely';
import { exec, type RuleContext } from './statement.ts';

/**
 * The run's work tables: the big intermediate sets of a run that the statements after them join
 * (a full run's scope_p and scope_l, facts, its suspects and stale claims, the latest notifications,
 * the legacy twins, the duplicate ids, their groups and their re-debits). Each is an UNLOGGED
 * table of the private schema, recon_work.run_<name>, read as `<name>` through a temporary view,
 * not a TEMP table: PostgreSQL reads a temporary table only in the backend that made it, so a
 * statement that joins one runs on one core, where these can be read by parallel workers (issue 30;
 * docs/architecture.md, "How matching is organised"). They are created and dropped inside the run's
 * transaction ({@link dropWorkTables}), so they never outlive the run, whether it commits, fails or
 * the server crashes (crash recovery empties UNLOGGED tables, and an uncommitted CREATE is undone);
 * nothing reads them across runs. One name each is enough: runs hold recon_work.reconcile_lock, and a
 * second run's CREATE would wait for the first's transaction anyway.
 */
export const WORK_TABLES = [
  'scope_p',
  'scope_l',
  'facts',
  'suspects',
  // Empty: the type of the suspects' wide rows that facts keeps (claims.ts).
  'suspect_row',
  // The claims of the scope that facts no longer wants (claims.ts).
  'stale_notification_matches',
  'stale_transaction_matches',
  'want_nm',
  'want_sm',
  'dup_m',
  'ranked',
  'redebits',
  // missing_at_provider's (transactions.ts): the scope's ledger entries no fact answers for.
  'unanswered_l',
  // The settlement roll-forward's (settlement.ts): the items of its days, those its discrepancies
  // name, and the disputed pairs.
  'settlement_window',
  'settlement_named',
  'settlement_disputed',
] as const;
export type WorkTable = (typeof WORK_TABLES)[number];

/** The table behind the run's view `name`. */
export function workTable(name: WorkTable): string {
  return `recon_work.run_${name}`;
}

/** Creates the work table `name` from `query` and the view `name` over it (analyze it when written). */
export async function createWorkTable(
  ctx: RuleContext,
  name: WorkTable,
  query: RawBuilder<unknown>,
): Promise<void> {
  await exec(ctx, sql`create unlogged table ${sql.raw(workTable(name))} as ${query}`);
  await exec(ctx, sql`create temp view ${sql.raw(name)} as select * from ${sql.raw(workTable(name))}`);
}

/** Analyzes the work tables given (after their indexes, if any, are built). */
export async function analyzeWorkTables(ctx: RuleContext, ...names: WorkTable[]): Promise<void> {
  await exec(ctx, sql`analyze ${sql.raw(names.map(workTable).join(', '))}`);
}

/**
 * Drops the run's work tables (and their views) before the run's transaction commits, and a full
 * run's scope_p when it is a view of the range rather than of its work table (scope.ts): it reads the
 * account's temporary view of provider_transactions, which the run drops next (account-scope.ts).
 */
export async function dropWorkTables(ctx: RuleContext): Promise<void> {
  await exec(ctx, sql`drop table if exists ${sql.raw(WORK_TABLES.map(workTable).join(', '))} cascade`);
  if (!ctx.scoped) await exec(ctx, sql`drop view if exists pg_temp.scope_p`);
}
