import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { createFindingsTable, FINDING_COLUMN_NAMES } from './rules/findings.ts';
import { type Rule, ruleStatement } from './rules/rule.ts';
import type { MatchCounts } from './rules/run-rules.ts';
import { exec, type RuleContext } from './rules/statement.ts';

/**
 * Reusing the last matching of a range (migration 0013). Matching is a function of the data, the
 * range, the settings, the due date and the code of the rules: a run of a range whose last matching
 * saw the same data (the same sum of recon_work.data_changes) with the same fingerprint finds what
 * that matching found. It then fills `findings` from the stored copy instead of matching again, and
 * the lifecycle (reconcile/apply-findings.ts) runs as always: last_seen_at moves, a discrepancy a
 * person resolved as fixed_in_ledger and still found is reopened, the run is recorded.
 *
 * Only the exact range is reused: a run of a different range (a night's window, a month) matches.
 */

/**
 * The code that decides what a run finds: the rules and claims (reconcile/rules/), the tolerances
 * (reconcile/tolerances/) and the account scope. Read once per process: a deployment of other rules is another fingerprint, so nothing stored
 * by the old code is reused by the new.
 */
const SOURCES_SHA256 = (() => {
  const hash = createHash('sha256');
  const files = ['./rules/', './tolerances/'].flatMap((folder) => {
    const dir = new URL(folder, import.meta.url);
    return readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .sort()
      .map((f) => new URL(f, dir));
  });
  for (const file of [...files, new URL('./account-scope.ts', import.meta.url)]) {
    hash.update(file.pathname.slice(file.pathname.lastIndexOf('/reconcile/'))).update('\0');
    hash.update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
})();

/** Keep the matchings of this many ranges per account (the latest stored); older ones are dropped. */
const RANGES_KEPT = 60;
/** Fold recon_work.data_changes into one row per account once it holds more rows than this. */
const COMPACT_AFTER_ROWS = 10_000;

/** The findings table's columns, for the copies made of it and taken from it. */
const FINDING_COLUMNS = sql.raw(FINDING_COLUMN_NAMES.join(', '));

/**
 * The key of one account's range in matched_ranges and matched_range_findings: the values of
 * (account, range_from, range_to), in that order.
 */
function rangeKey(ctx: RuleContext, account: string) {
  return sql`${account}, ${ctx.from}::date, ${ctx.to}::date`;
}

/** The fingerprint of everything but the data and the range: code, settings, due date, the rules run. */
export function matchingFingerprint(ctx: RuleContext, rules: readonly Rule[]): string {
  const hash = createHash('sha256').update(SOURCES_SHA256);
  hash.update(JSON.stringify(ctx.settings)).update(`\0${ctx.dueThrough}\0${ctx.stuckThrough}\0`);
  // Another tolerances version, or a lagged due date that moved, is another matching: a full one.
  hash.update(JSON.stringify(ctx.tolerances ?? null));
  for (const rule of rules) {
    const compiled = ruleStatement(rule, ctx).compile(ctx.trx);
    hash.update(`${rule.name}\0${compiled.sql}\0${JSON.stringify(compiled.parameters)}\0`);
  }
  return hash.digest('hex');
}

/** The sum of the account's recon_work.data_changes this transaction sees (as text: a bigint). */
async function dataChanges(ctx: RuleContext, account: string): Promise<string> {
  const r = await sql<{ total: string }>`
    select coalesce(sum(weight), 0)::text as total from recon_work.data_changes
    where account is null or account = ${account}`.execute(ctx.trx);
  return r.rows[0]!.total;
}

/**
 * When the range's last matching saw the data this run sees, with the same fingerprint: creates
 * `findings` with its findings and returns its counts. Otherwise null (the run matches).
 */
export async function reuseMatching(
  ctx: RuleContext,
  account: string,
  fingerprint: string,
): Promise<MatchCounts | null> {
  const stored = await sql<{ matched: MatchCounts; data_changes: string }>`
    select matched, data_changes::text as data_changes from recon_work.matched_ranges
    where (account, range_from, range_to) = (${rangeKey(ctx, account)}) and fingerprint = ${fingerprint}`.execute(
    ctx.trx,
  );
  const last = stored.rows[0];
  if (!last || last.data_changes !== (await dataChanges(ctx, account))) return null;
  await exec(ctx, createFindingsTable());
  await exec(
    ctx,
    sql`insert into findings (${FINDING_COLUMNS}) select ${FINDING_COLUMNS} from recon_work.matched_range_findings
      where (account, range_from, range_to) = (${rangeKey(ctx, account)})`,
  );
  return last.matched;
}

/**
 * Stores this run's matching of its range: the fingerprint, the data_changes sum it saw (its own
 * claims' writes included: the transaction sees them), its counts and a copy of `findings`. Replaces
 * the range's earlier matching ({@link forgetMatching}) and drops the account's oldest beyond RANGES_KEPT.
 */
export async function keepMatching(
  ctx: RuleContext,
  account: string,
  fingerprint: string,
  matched: MatchCounts,
): Promise<void> {
  const count = await sql<{ n: number }>`
    select count(*)::int as n from recon_work.data_changes`.execute(ctx.trx);
  // Under the reconcile lock, so no other run compacts at once; rows of writers still running are
  // not seen here and stay, so the sum only ever grows.
  if (count.rows[0]!.n > COMPACT_AFTER_ROWS) {
    await exec(
      ctx,
      sql`with folded as (delete from recon_work.data_changes returning account, weight)
        insert into recon_work.data_changes (account, weight) select account, sum(weight) from folded group by account`,
    );
  }
  await forgetMatching(ctx, account);
  const key = rangeKey(ctx, account);
  await exec(
    ctx,
    sql`insert into recon_work.matched_ranges (account, range_from, range_to, fingerprint, data_changes, run_id, matched)
      select ${key}, ${fingerprint}, ${await dataChanges(ctx, account)}::bigint, ${ctx.runId}::bigint,
        ${JSON.stringify(matched)}::jsonb`,
  );
  await exec(
    ctx,
    sql`insert into recon_work.matched_range_findings (account, range_from, range_to, ${FINDING_COLUMNS})
      select ${key}, ${FINDING_COLUMNS} from findings order by discrepancy_key`,
  );
  await exec(
    ctx,
    sql`with gone as (delete from recon_work.matched_ranges m where m.account = ${account}
        and (m.range_from, m.range_to) not in (select range_from, range_to from recon_work.matched_ranges
          where account = ${account} order by stored_at desc, run_id desc limit ${RANGES_KEPT})
        returning account, range_from, range_to)
      delete from recon_work.matched_range_findings f using gone g
      where (f.account, f.range_from, f.range_to) = (g.account, g.range_from, g.range_to)`,
  );
}

/**
 * Drops the range's stored matching, its findings with it (a run over changed keys did not find all
 * of the range's findings; a run stores its own). Both tables are UNLOGGED and the findings have no
 * foreign key to their range (migration 0040): this module deletes them together.
 */
export async function forgetMatching(ctx: RuleContext, account: string): Promise<void> {
  const key = rangeKey(ctx, account);
  await exec(
    ctx,
    sql`delete from recon_work.matched_ranges where (account, range_from, range_to) = (${key})`,
  );
  // The range's findings, and any left without their range (its row deleted by hand).
  await exec(
    ctx,
    sql`delete from recon_work.matched_range_findings where (account, range_from, range_to) = (${key})`,
  );
}
