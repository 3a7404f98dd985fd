import { type RawBuilder, sql } from 'kysely';
import { keepMatching, forgetMatching, matchingFingerprint, reuseMatching } from './matching-reuse.ts';
import type { Rule } from './rules/rule.ts';
import { matchRange, type MatchCounts } from './rules/run-rules.ts';
import { estimatedRows } from './rules/keyed-rows.ts';
import { exec, type RuleContext } from './rules/statement.ts';
import { KEPT_WHILE_FOUND } from './apply-findings.ts';

/**
 * A re-run after a change costs what the change touches (docs/architecture.md). Every write to a
 * table matching reads notes the keys it changed in recon_work.changed_keys (migration 0027), and
 * each run notes, per date of its range, the snapshot it saw and the fingerprint of its code and
 * settings in recon_work.matched_days. A run whose every date was matched before with the same
 * fingerprint looks only at the keys written since (those whose writer the dates' snapshots did not
 * see) and at the whole of the dates never matched or whose due or stuck state moved, closed over what the rules join on
 * (reconcile/rules/changed-scope.ts); it resolves only discrepancies whose row it looked at.
 *
 * A full run (every row of the range) stays the reference: asked for (`recon reconcile --full`), on
 * the first run of a range none of whose dates was matched, after a change of code or settings, or after a write no key can tell (the
 * fee schedule, a truncate).
 */

/** Why a run matched every row of its range. */
export type FullBecause =
  | 'asked'
  | 'first run of these dates'
  | 'code or settings changed'
  | 'a write no key tells'
  | 'most of the range changed';

/** How a run matched: the findings it reused, every row of its range, or the changed keys' scope. */
export type MatchingScope =
  | { readonly scope: 'reused' }
  | { readonly scope: 'full'; readonly because: FullBecause }
  | { readonly scope: 'incremental'; readonly changedKeys: number };

const kept = () => sql.join(KEPT_WHILE_FOUND.map((r) => sql.lit(r)));

/**
 * How long a date's matching state is kept: while a run can still reconcile the date again because of
 * a change. The follow-up of non-final transactions (RECON_FOLLOW_UP_DAYS) reaches back that many
 * days before the night's day, and the night's window lies within it; a date older than that has
 * its state dropped, and its next run (a person's) is a full one. Counted in business dates from the
 * run's own day, not from when the date was last matched: a date of the horizon matched once, months
 * ago, keeps its state, so that the follow-up's run over it goes over the changed keys.
 */
export function stateKeptFrom(today: string, followUpDays: number): RawBuilder<unknown> {
  return sql`${today}::date - ${followUpDays + 1}::int`;
}
/**
 * Past this many changed keys, when they are also a quarter of the range's provider rows or more, a
 * run over them costs more than a full one: 20,000 keys of one import against a range of 20,800
 * rows took 16.7 s over the keys and 3.2 s in full (test/faults/analyst-cannot-stall-pipeline.test.ts'
 * warehouse, load 17). Below it the closure's index probes win.
 */
const FULL_ABOVE_KEYS = 10_000;
/** Days around a range whose last matching a run over changed keys notes (more than a candidate search spans). */
const NEAR_DAYS = 366;

/**
 * Fills `findings` for the run: reused, full or over the changed keys (see the module's comment).
 * Afterwards, {@link finishMatching} records what the run saw.
 */
export async function matchChanges(
  ctx: RuleContext,
  account: string,
  rules: readonly Rule[],
  full: boolean,
): Promise<{ matched: MatchCounts; how: MatchingScope; snapshot: string }> {
  const snapshot = (await sql<{ s: string }>`select pg_current_snapshot()::text as s`.execute(ctx.trx))
    .rows[0]!.s;
  const fingerprint = matchingFingerprint(ctx, rules);
  // Over changed keys first: with nothing changed, it looks at nothing, where reusing the range's
  // stored findings would take the lifecycle through every discrepancy of the range again.
  const how = await chooseScope(ctx, account, rules, full);
  if (how.scope === 'full') {
    const reused = how.because === 'asked' ? null : await reuseMatching(ctx, account, fingerprint);
    if (reused) return { matched: reused, how: { scope: 'reused' }, snapshot };
    const matched = await matchRange(ctx, rules);
    if (!ctx.dryRun) await keepMatching(ctx, account, fingerprint, matched);
    return { matched, how, snapshot };
  }
  // The stored findings of the range are no longer all of its findings.
  await forgetMatching(ctx, account);
  // matchRange notes what the run looks at (looked_at) once its scope is built: the roll-forward
  // reads the discrepancies the run keeps without looking (unseen).
  const matched = await matchRange({ ...ctx, scoped: true, unseen: unseenDiscrepancies(ctx) }, rules);
  return { matched, how, snapshot };
}

/**
 * The discrepancies (`d`) a run over changed keys looked at: those in recon_work's temporary
 * `looked_at` (reconcile/rules/looked-at.ts, filled by matchRange).
 */
export function scopeCondition(): RawBuilder<unknown> {
  return sql`d.discrepancy_id in (select discrepancy_id from looked_at)`;
}

/**
 * The discrepancies (`d`) of the range a run over changed keys did not find but counts in its totals,
 * after the lifecycle: those it did not look at and that were found when last looked at (unresolved,
 * or resolved by a person as accepted, provider_error or written_off and not in
 * recon_work.unfound_resolutions), so that the run's totals are the range's. Read once, for the
 * totals (reconcile-range.ts), without copying them into `findings`.
 */
export function countedUnfound(ctx: RuleContext): RawBuilder<unknown> {
  return sql`d.business_date between ${ctx.from}::date and ${ctx.to}::date
    and (d.resolved_at is null or (d.resolution in (${kept()})
      and not exists (select 1 from recon_work.unfound_resolutions u where u.discrepancy_id = d.discrepancy_id)))
    and not exists (select 1 from findings f where f.discrepancy_key = d.discrepancy_key)`;
}

/**
 * Before the lifecycle, for the roll-forward (RuleContext.unseen): the discrepancies of the range the
 * run does not look at that were found when last looked at, those countedUnfound counts afterwards.
 */
function unseenDiscrepancies(ctx: RuleContext): RawBuilder<unknown> {
  return sql`select * from discrepancies d where d.business_date between ${ctx.from}::date and ${ctx.to}::date
    and (d.resolved_at is null or (d.resolution in (${kept()})
      and not exists (select 1 from recon_work.unfound_resolutions u where u.discrepancy_id = d.discrepancy_id)))
    and not ${scopeCondition()}`;
}

/**
 * After the lifecycle: every run but a reused one records its dates' state; the changes no date
 * needs any more are dropped at the run's end (reconcile/seen-changes.ts).
 */
export async function finishMatching(
  ctx: RuleContext,
  account: string,
  rules: readonly Rule[],
  how: MatchingScope,
  snapshot: string,
  keptFrom: RawBuilder<unknown>,
  first: boolean,
): Promise<void> {
  // A first run (the account held no discrepancy: reconcile/apply-findings.ts) found every discrepancy
  // the range holds, and no transition has an id: nothing to note.
  if (!first) await noteUnfoundResolutions(ctx, how.scope === 'incremental' ? scopeCondition() : sql`true`);
  if (how.scope === 'reused') return;
  await exec(
    ctx,
    sql`insert into recon_work.matched_days (account, business_date, fingerprint, due, stuck, seen, run_id)
      select ${account}, d::date, ${daysFingerprint(ctx, rules)}, d::date <= ${ctx.dueThrough}::date,
        d::date <= ${ctx.stuckThrough}::date, ${snapshot}::pg_snapshot, ${ctx.runId}::bigint
      from generate_series(${ctx.from}::date, ${ctx.to}::date, interval '1 day') d
      on conflict (account, business_date) do update set fingerprint = excluded.fingerprint, due = excluded.due,
        stuck = excluded.stuck, seen = excluded.seen, run_id = excluded.run_id, matched_at = now()`,
  );
  await exec(ctx, sql`delete from recon_work.matched_days where business_date < ${keptFrom}`);
}

/**
 * Keeps recon_work.unfound_resolutions for the discrepancies of the range the run looked at (`d`
 * where `inScope`): found now, out; resolved as accepted, provider_error or written_off and not found,
 * in.
 */
async function noteUnfoundResolutions(ctx: RuleContext, inScope: RawBuilder<unknown>): Promise<void> {
  await exec(
    ctx,
    sql`delete from recon_work.unfound_resolutions u using transitions t where u.discrepancy_id = t.discrepancy_id`,
  );
  await exec(
    ctx,
    sql`insert into recon_work.unfound_resolutions (discrepancy_id)
      select d.discrepancy_id from discrepancies d
      where d.business_date between ${ctx.from}::date and ${ctx.to}::date
        and d.resolution in (${kept()}) and ${inScope}
        and not exists (select 1 from findings f where f.discrepancy_key = d.discrepancy_key)
      on conflict do nothing`,
  );
}

/** The fingerprint of the code, settings and rules, without the due dates (matched_days keeps those). */
function daysFingerprint(ctx: RuleContext, rules: readonly Rule[]): string {
  return matchingFingerprint({ ...ctx, dueThrough: '', stuckThrough: '' }, rules);
}

/**
 * Full or over changed keys; for the latter, fills changed_t, changed_m, changed_r, changed_days and
 * flagged_days with the keys written since the range's dates were last matched, the dates of the
 * rows they wrote and the dates whose due or stuck state moved.
 */
async function chooseScope(
  ctx: RuleContext,
  account: string,
  rules: readonly Rule[],
  full: boolean,
): Promise<MatchingScope> {
  if (full) return { scope: 'full', because: 'asked' };
  const { from, to } = ctx;
  const days = await sql<{ known: number; same: number }>`
    select count(*)::int as known, count(*) filter (where fingerprint = ${daysFingerprint(ctx, rules)})::int as same
    from recon_work.matched_days where account = ${account} and business_date between ${from}::date and ${to}::date`.execute(
    ctx.trx,
  );
  const { known, same } = days.rows[0]!;
  if (known === 0) return { scope: 'full', because: 'first run of these dates' };
  if (same < known) return { scope: 'full', because: 'code or settings changed' };
  // Which run last matched each date around the range, before this run records itself: the
  // candidates of a run over changed keys (reconcile/candidates/changed-candidates.ts) read it.
  await exec(
    ctx,
    sql`create temp table matched_before on commit drop as
      select business_date, run_id from recon_work.matched_days where account = ${account}
        and business_date between ${from}::date - ${NEAR_DAYS}::int and ${to}::date + ${NEAR_DAYS}::int`,
  );
  if (await gatherChanges(ctx, account)) return { scope: 'full', because: 'a write no key tells' };
  for (const [table, column] of [
    ['changed_t', 'transaction_ids'],
    ['changed_m', 'merchant_transaction_ids'],
    ['changed_r', 'return_transaction_ids'],
  ] as const) {
    await exec(
      ctx,
      sql`create temp table ${sql.raw(table)} on commit drop as
        select distinct unnest(${sql.ref(column)}) as key from changed`,
    );
  }
  // The range's dates of the rows those statements wrote, before and after (migration 0035): the
  // roll-forward of those days is computed again (reconcile/rules/returns-scope.ts, scope_days).
  await exec(
    ctx,
    sql`create temp table changed_days on commit drop as
      select distinct d as business_date from changed, unnest(changed.business_dates) d
      where d between ${from}::date and ${to}::date`,
  );
  // Dates never matched (a nightly window's new day), dates whose due or stuck state moved and dates
  // looked at whole instead of by the keys written since their last run (gatherChanges): every row
  // of theirs is looked at.
  await exec(
    ctx,
    sql`create temp table flagged_days on commit drop as
      select d::date as business_date
      from generate_series(${from}::date, ${to}::date, interval '1 day') d
      left join recon_work.matched_days m on m.account = ${account} and m.business_date = d::date
      where m.business_date is null
        or m.due <> (d::date <= ${ctx.dueThrough}::date) or m.stuck <> (d::date <= ${ctx.stuckThrough}::date)
      union select unnest(dates) from seen_groups where whole`,
  );
  await exec(ctx, sql`analyze changed_t, changed_r, flagged_days`);
  const keys = await sql<{
    n: number;
  }>`select ((select count(*) from changed_t) + (select count(*) from changed_m)
    + (select count(*) from changed_r))::int as n`.execute(ctx.trx);
  const changedKeys = keys.rows[0]!.n;
  if (changedKeys > FULL_ABOVE_KEYS && changedKeys * 4 >= (await rangeRows(ctx))) {
    return { scope: 'full', because: 'most of the range changed' };
  }
  return { scope: 'incremental', changedKeys };
}

/**
 * Fills the temporary table `changed` with the change log's rows (recon_work.changed_keys) a run must
 * read: those whose writer the last run of one of the range's dates did not see (its snapshot in
 * recon_work.matched_days; `pg_visible_in_snapshot` is exact under concurrent writers committing in
 * any order). Returns whether one of them is a write no key tells.
 *
 * The range's dates are grouped by the snapshot of their last run (seen_groups): the dates the same
 * run matched last. A key matters to a date only when that date's last run did not see it, so a key
 * seen by every date's last run but those of a group is gathered for the whole range only when that
 * costs less than looking at the group's dates whole: a date matched long ago (a follow-up's date
 * last matched days before) would otherwise bring every key written since, the other days' loads
 * among them, into the whole range's scope. A group whose keys beyond the fewest any group has
 * outnumber its dates' provider rows is looked at whole (flagged_days) and its keys are not gathered:
 * the other dates' last runs saw them. Either way, every key written since a date's last run is
 * looked at for that date, by its key or by the date's every row.
 */
async function gatherChanges(ctx: RuleContext, account: string): Promise<boolean> {
  await exec(
    ctx,
    sql`create temp table seen_groups on commit drop as
      select seen_text, seen_text::pg_snapshot as seen, dates, false as whole
      from (select seen::text as seen_text, array_agg(business_date order by business_date) as dates
        from recon_work.matched_days
        where account = ${account} and business_date between ${ctx.from}::date and ${ctx.to}::date
        group by seen::text) g`,
  );
  const unseenBy = (s: string) => sql`not pg_visible_in_snapshot(c.change_xid, ${sql.ref(`${s}.seen`)})`;
  const whole = await sql<{ whole: boolean }>`select exists (select 1 from recon_work.changed_keys c
    where c.whole and exists (select 1 from seen_groups s where ${unseenBy('s')})) as whole`.execute(ctx.trx);
  if (whole.rows[0]!.whole) return true;
  // The keys each group's last run did not see, counted from the arrays' lengths (nothing unnested).
  const groups = await sql<{ seen_text: string; dates: string[]; keys: string }>`
    with c as materialized (select c.change_xid, coalesce(cardinality(c.transaction_ids), 0)
        + coalesce(cardinality(c.merchant_transaction_ids), 0) + coalesce(cardinality(c.return_transaction_ids), 0) as n
      from recon_work.changed_keys c
      where (select count(*) from seen_groups) > 1 and exists (select 1 from seen_groups s where ${unseenBy('s')}))
    select seen_text, dates::text[] as dates, n::text as keys from (
      select g.seen_text, g.dates, coalesce(sum(c.n), 0) as n
      from seen_groups g left join c on ${unseenBy('g')}
      where (select count(*) from seen_groups) > 1
      group by g.seen_text, g.dates) x
    order by n`.execute(ctx.trx);
  const fewest = Number(groups.rows[0]?.keys ?? 0);
  for (const g of groups.rows.slice(1)) {
    const rows = await estimatedRows(
      ctx,
      sql`select 1 from provider_transactions where transaction_on = any (${g.dates}::date[])`,
    );
    if (Number(g.keys) - fewest > rows)
      await exec(ctx, sql`update seen_groups set whole = true where seen_text = ${g.seen_text}`);
  }
  await exec(
    ctx,
    sql`create temp table changed on commit drop as
      select c.* from recon_work.changed_keys c
      where exists (select 1 from seen_groups s where not s.whole and ${unseenBy('s')})`,
  );
  return false;
}

/** The provider transactions of the range's dates, every account's (an upper bound, read from the date index). */
async function rangeRows(ctx: RuleContext): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from provider_transactions
    where transaction_on between ${ctx.from}::date and ${ctx.to}::date`.execute(ctx.trx);
  return r.rows[0]!.n;
}
