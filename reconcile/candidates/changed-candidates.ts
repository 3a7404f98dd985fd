/**
 * The near-miss candidates of a run over changed keys (reconcile/incremental.ts; docs/architecture.md,
 * "A re-run costs what the change touches"): the same candidates as findCandidates
 * (find-candidates.ts) writes in a full run, searched for and rewritten only for the discrepancies
 * whose candidates can have changed, so that a run costs what changed, not the range's missing items
 * paired with each other.
 *
 * A discrepancy's candidates are a function of its own item and the open missing items of the other
 * side a few days around it. So they can change only when
 * - its own item changed (cand_changed below: what the run looked at or changed, an item whose key
 *   was written since the range was last matched (its merchant user, a manual match, a person's
 *   resolution), or every item of a date another run has matched since this range's dates were);
 * - it had a changed item among its candidates (match_candidates_candidate_idx, migration 0032);
 * - a changed item now passes one of its checks.
 * Those are the targets (cand_targets); every item within the search window of one of them is read,
 * through discrepancies_unmatched_idx for the days around the changed items only. A ledger entry
 * inside its grace period has no discrepancy, so a change to it alone is not seen here (the next
 * full run writes its effect; docs/architecture.md, Near-miss candidates).
 */
import { type RawBuilder, sql } from 'kysely';
import { exec, type RuleContext } from '../rules/statement.ts';
import { indexItems, pairs, PASSES_A_CHECK } from './candidate-pairs.ts';
import {
  collectItems,
  itemCondition,
  rankCandidates,
  searchDays,
  storeCandidates,
  tolerancesTable,
  writeDays,
} from './find-candidates.ts';

const MISSING = sql`('missing_in_ledger','missing_at_provider')`;

/**
 * Finds and stores the candidates of a run over changed keys. Reads the run's temporary tables
 * looked_at, transitions, changed_t, changed_m and matched_before (reconcile/incremental.ts).
 */
export async function findChangedCandidates(ctx: RuleContext): Promise<void> {
  const days = searchDays(await maxLagOfItems(ctx));
  await noteChangedItems(ctx, days);
  const { from, to } = ctx;
  // Targets whose own item changed, or that had a changed item among their candidates (one index
  // probe per changed item).
  const inRange = sql`m.business_date between ${from}::date and ${to}::date`;
  await exec(
    ctx,
    sql`create temp table cand_targets on commit drop as
      select discrepancy_id from cand_changed where business_date between ${from}::date and ${to}::date
      union select m.discrepancy_id from cand_changed c cross join lateral (select m.discrepancy_id
        from match_candidates m where m.candidate_discrepancy_id = c.discrepancy_id and ${inRange} offset 0) m
      union select m.discrepancy_id from cand_changed c cross join lateral (select m.discrepancy_id
        from match_candidates m where m.discrepancy_id = c.discrepancy_id and ${inRange} offset 0) m`,
  );
  // Every item two windows around the changed ones and the targets: the targets found below are one
  // window from a changed item, and their candidates one window further.
  await exec(
    ctx,
    sql`create temp table cand_near on commit drop as
      select distinct g::date as day from (
        select business_date from cand_changed
        union select m.business_date from cand_targets t cross join lateral (select m.business_date
          from match_candidates m where m.discrepancy_id = t.discrepancy_id offset 0) m) x,
      generate_series(x.business_date - ${2 * days}::int, x.business_date + ${2 * days}::int, interval '1 day') g`,
  );
  await collectItems(ctx, days, sql`d.business_date = any (array(select day from cand_near))`);
  await indexItems(ctx);
  await tolerancesTable(ctx);
  await writeDays(ctx, days);
  // Targets that a changed item now passes a check of. The checks and their necessary conditions are
  // symmetric (the same currency, amounts and dates within the same distance, the same user, ids the
  // same edits apart), so the pairs are found from the changed items and read the other way round:
  // the targets are their candidates of the run's dates.
  const changed = sql`t.discrepancy_id in (select discrepancy_id from cand_changed)`;
  await exec(
    ctx,
    sql`insert into cand_targets (discrepancy_id)
      select distinct candidate_discrepancy_id from (${pairs(days, sql`c.target`, changed, true)}) p
      where ${PASSES_A_CHECK}`,
  );
  await exec(ctx, sql`analyze cand_targets`);
  const targets = sql`t.target and t.discrepancy_id in (select discrepancy_id from cand_targets)`;
  await rankCandidates(ctx, pairs(days, sql`true`, targets, true));
  await storeCandidates(ctx, sql`m.discrepancy_id in (select discrepancy_id from cand_targets)`);
}

/**
 * The largest date lag among the currencies of the items around from..to, as a full run's search
 * finds it (find-candidates.ts): asked per lag, largest first, of the currencies that have one.
 */
async function maxLagOfItems(ctx: RuleContext): Promise<number> {
  const byLag = new Map<number, string[]>();
  for (const t of ctx.tolerances?.currencies ?? [])
    if (t.dateLagBusinessDays > 0)
      byLag.set(t.dateLagBusinessDays, [...(byLag.get(t.dateLagBusinessDays) ?? []), t.currency]);
  for (const lag of [...byLag.keys()].sort((a, b) => b - a)) {
    const r = await sql<{ found: boolean }>`select exists (select 1 from discrepancies d
      where ${itemCondition(ctx, searchDays(0))} and d.currency::text in (${sql.join(byLag.get(lag)!)})) as found`.execute(
      ctx.trx,
    );
    if (r.rows[0]!.found) return lag;
  }
  return 0;
}

/**
 * cand_changed: the missing_* discrepancies whose item can have changed since the range's candidates
 * were last written, by index lookups: those the run looked at or changed, those whose key was
 * written since, and those of dates another run matched since (cand_dirty_days).
 */
async function noteChangedItems(ctx: RuleContext, days: number): Promise<void> {
  const { from, to } = ctx;
  // A date of the search window matched by a later run than the oldest of the range's dates: that
  // run's lifecycle may have changed its items.
  await exec(
    ctx,
    sql`create temp table cand_dirty_days on commit drop as
      select business_date from matched_before
      where business_date between ${from}::date - ${days}::int and ${to}::date + ${days}::int
        and run_id > (select min(run_id) from matched_before where business_date between ${from}::date and ${to}::date)`,
  );
  // One index probe per id, key or date (lateral, offset 0), whatever the planner's estimates.
  // Each part reads the discrepancies of its ids, keys or dates through their index (`= any` of an
  // array, whatever the planner's estimates of the run's small tables); the kind is filtered after.
  // The parts are appended (`union all`: a discrepancy two of them find is there twice, read as a
  // set): made distinct, they were hashed in a table sized for the planner's estimates (16 MB),
  // 10-48 ms against 1-5 ms for one changed entry at 1,000,000 rows (docs/benchmark-record.md §1).
  const probe = (keys: RawBuilder<unknown>, column: RawBuilder<unknown>, kinds = MISSING) =>
    sql`select d.discrepancy_id, d.business_date from discrepancies d
      where ${column} = any (array(${keys})) and d.kind in ${kinds}`;
  await exec(
    ctx,
    sql`create temp table cand_changed on commit drop as
      ${probe(sql`select discrepancy_id from looked_at`, sql`d.discrepancy_id`)}
      union all ${probe(sql`select discrepancy_key from transitions where event is not null`, sql`d.discrepancy_key`)}
      union all ${probe(sql`select key from changed_t`, sql`d.transaction_id`, sql`('missing_in_ledger')`)}
      union all ${probe(sql`select key from changed_m`, sql`d.merchant_transaction_id`, sql`('missing_at_provider')`)}
      union all select d.discrepancy_id, d.business_date from cand_dirty_days k cross join lateral (
        select d.discrepancy_id, d.business_date from discrepancies d
        where d.business_date = k.business_date and d.kind in ${MISSING} offset 0) d`,
  );
  await exec(ctx, sql`analyze cand_changed`);
}
