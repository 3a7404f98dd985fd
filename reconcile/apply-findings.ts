import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { execStatement } from './rules/statement.ts';

import type { LifecycleCounts } from '../domain/run-summary.ts';

export type { LifecycleCounts };

/**
 * Resolutions a run keeps while it still finds the discrepancy (its values are still updated; a run's
 * own write-off beyond the limit is reopened by reconcile/tolerances/write-off-findings.ts); any other
 * resolution is reopened when found again.
 */
export const KEPT_WHILE_FOUND = ['accepted', 'provider_error', 'written_off'] as const;
const KEPT = sql.join(KEPT_WHILE_FOUND.map((r) => sql.lit(r)));

/** What applyFindings works on: the run's range, instant and id, and which discrepancies it looked at. */
export interface FindingsRun {
  readonly from: string;
  readonly to: string;
  readonly asOf: string;
  readonly runId: number;
  /**
   * The discrepancies (as `d`) of the range the run looked at: only those may be resolved or verified
   * for not being found. Every one for a full run; for a run over changed keys, those whose row was in
   * its scope (reconcile/incremental.ts): the others keep their state, not looked at.
   */
  readonly inScope?: RawBuilder<unknown>;
  /**
   * The account holds no discrepancy yet (its first run; accountHoldsAny, asked before the lifecycle):
   * every finding opens one, and the statements that look for one to reopen, change, resolve, verify,
   * or whose run's write-off to reverse, are not run (they find nothing).
   */
  readonly first: boolean;
}

/**
 * Turns the run's `findings` into the discrepancies lifecycle, in the run's transaction:
 * - a finding with a new key opens a discrepancy (first_seen_at = asOf);
 * - a finding whose discrepancy was resolved reopens it (status open, resolved_at cleared; the
 *   acknowledgement and note are kept);
 * - a finding whose expected/actual/amounts/rule changed updates it ('changed');
 * - an unresolved discrepancy of the range (in the run's scope) with no finding any more is resolved
 *   (resolved_at = asOf).
 * - a discrepancy resolved as accepted, provider_error or written_off stays resolved while it is
 *   still found (its values are still updated, 'changed'; a run's own write-off that no longer fits
 *   the write-off limit is reopened by reconcile/tolerances/write-off-findings.ts); one resolved as fixed_in_ledger is reopened
 *   when it is still found, and 'verified' once when it is not.
 * A run never clears a person's acknowledgement, note or assignee: it only adds events.
 * Every state change is written to discrepancy_events with the run id. last_seen_at moves on every run.
 */
export async function applyFindings(trx: Transaction<Database>, req: FindingsRun): Promise<LifecycleCounts> {
  const { from, to, first } = req;
  // Without statistics the planner takes the findings for many and hashes every discrepancy of
  // the warehouse; with them it looks the few hundred keys up. A first run looks no finding up (its
  // write-offs' lookups are nested loops whatever the estimates): at 1,000,000 rows the analysis took
  // 30-35 ms of its 39,667 findings.
  if (!first) await execStatement(trx, sql`analyze findings`);
  // A first run: every finding opens a discrepancy, and none was there to reopen, change, resolve or
  // verify, so the statements that look for those are not run (at 1,000,000 rows the transitions'
  // lookup of each of 39,667 findings in the empty table alone took 36 ms; docs/benchmark-record.md
  // §2).
  await createTransitions(trx, first);
  await writeFound(trx, req, first);
  if (!first) await writeTransitionEvents(trx, req);
  const resolved = first ? 0 : await resolveNotFound(trx, req);
  if (!first) await verifyFixedInLedger(trx, req);

  // The workbench totals' deltas this run appended, folded (migration 000800).
  await execStatement(trx, sql`select compact_discrepancy_totals(${from}::date, ${to}::date)`);

  const counts = await sql<{ event: string | null; n: number }>`
    select event, count(*)::int as n from transitions group by event`.execute(trx);
  const by = new Map(counts.rows.map((r) => [r.event, r.n]));
  return {
    opened: by.get('opened') ?? 0,
    reopened: by.get('reopened') ?? 0,
    changed: by.get('changed') ?? 0,
    resolved,
    unchanged: by.get(null) ?? 0,
  };
}

/**
 * The event each finding brings to its discrepancy: opened, reopened, changed or none. `first`: the
 * account holds no discrepancy, every finding opens one (the same columns, without looking them up).
 */
async function createTransitions(trx: Transaction<Database>, first: boolean): Promise<void> {
  if (first) {
    await execStatement(
      trx,
      sql`create temp table transitions on commit drop as
      select f.discrepancy_key, null::bigint as discrepancy_id, 'opened'::text as event, null::jsonb as before,
        null::text as resolution
      from findings f`,
    );
    return;
  }
  await execStatement(
    trx,
    sql`create temp table transitions on commit drop as
    select f.discrepancy_key, d.discrepancy_id,
      case when d.discrepancy_id is null then 'opened'
           when d.resolved_at is not null and (d.resolution is null or d.resolution not in (${KEPT})) then 'reopened'
           when (d.rule, d.expected, d.actual, d.expected_amount_cents, d.actual_amount_cents, d.candidates, d.currency)
                is distinct from (f.rule, f.expected, f.actual, f.expected_amount_cents, f.actual_amount_cents, f.candidates, f.currency)
             then 'changed'
      end as event,
      case when d.discrepancy_id is not null then jsonb_build_object('expected', d.expected, 'actual', d.actual,
        'expected_amount_cents', d.expected_amount_cents, 'actual_amount_cents', d.actual_amount_cents) end as before,
      d.resolution
    from findings f
    -- One index lookup per finding, whatever the planner's estimates: a hash join here read every
    -- discrepancy of the warehouse's history for a run of a few days.
    left join lateral (select * from discrepancies d where d.discrepancy_key = f.discrepancy_key offset 0) d on true`,
  );
}

/**
 * Opens, reopens and updates the discrepancies found. Every discrepancy found takes the finding's
 * values, those found unchanged too (no event, last_seen_at moves): a row that moved to another
 * date (or merchant transaction id) keeps its rule's expected and actual, and a stale business_date
 * would count the discrepancy on its old day, in the workbench totals and in the roll-forward of a
 * run over changed keys, which reads the discrepancies it does not look at by their date
 * (reconcile/incremental.ts).
 *
 * A discrepancy opened gets its 'opened' event from the insert's own rows (returning), in the same
 * statement: looked up again by key, one index probe each, they cost a first run, whose every
 * discrepancy is opened, 0.65 s at 1,000,000 rows. The new discrepancies are inserted in the order of
 * their unique key (account, discrepancy_key): each lands at the right end of that index, and the
 * kind that leads the key groups them for the others (a first run's 39,667 at 1,000,000 rows: 12%
 * less server CPU for the statement than in the findings' order; docs/benchmark-record.md §2).
 */
async function writeFound(trx: Transaction<Database>, req: FindingsRun, first: boolean): Promise<void> {
  const { asOf, runId } = req;
  // The findings opened are those whose transition is nothing else (each finding has one): as an anti
  // join the planner hashes the findings and reads the unanalysed transitions once, where the join on
  // event = 'opened' was estimated at a few rows and probed the findings' key once per finding (a first
  // run's 39,667 at 1,000,000 rows: 0.06 s of CPU against 0.14 s). A first run opens every finding.
  const onlyOpened = first
    ? sql``
    : sql`where not exists (select 1 from transitions t where t.discrepancy_key = f.discrepancy_key
        and t.event is distinct from 'opened')`;
  await execStatement(
    trx,
    sql`with opened as (insert into discrepancies (discrepancy_key, kind, rule, transaction_id, merchant_transaction_id,
        return_transaction_id, business_date, currency, expected, actual, expected_amount_cents, actual_amount_cents,
        difference_cents, candidates, status, first_seen_at, last_seen_at)
      select f.discrepancy_key, f.kind, f.rule, f.transaction_id, f.merchant_transaction_id, f.return_transaction_id,
        f.business_date, f.currency, f.expected, f.actual, f.expected_amount_cents, f.actual_amount_cents,
        f.difference_cents, f.candidates, 'open', ${asOf}::timestamptz, ${asOf}::timestamptz
      from findings f
      ${onlyOpened}
      order by f.discrepancy_key
      returning discrepancy_id, expected, actual)
    insert into discrepancy_events (discrepancy_id, event, details, at)
    select discrepancy_id, 'opened',
      jsonb_build_object('run_id', ${runId}::bigint, 'expected', expected, 'actual', actual),
      ${asOf}::timestamptz
    from opened`,
  );
  // A first run's findings all opened a discrepancy: none to update.
  if (first) return;
  await execStatement(
    trx,
    sql`update discrepancies d set rule = f.rule, transaction_id = f.transaction_id,
      merchant_transaction_id = f.merchant_transaction_id, return_transaction_id = f.return_transaction_id,
      business_date = f.business_date, currency = f.currency, expected = f.expected, actual = f.actual,
      expected_amount_cents = f.expected_amount_cents, actual_amount_cents = f.actual_amount_cents,
      difference_cents = f.difference_cents, candidates = f.candidates, last_seen_at = ${asOf}::timestamptz,
      resolved_at = case when t.event = 'reopened' then null else d.resolved_at end,
      resolution = case when t.event = 'reopened' then null else d.resolution end,
      resolved_by = case when t.event = 'reopened' then null else d.resolved_by end,
      status = case when t.event = 'reopened' then 'open' else d.status end
    from findings f join transitions t using (discrepancy_key)
    where d.discrepancy_key = f.discrepancy_key and t.event is distinct from 'opened'`,
  );
}

/** One event per reopened or changed discrepancy, with the run id and the values before and after. */
async function writeTransitionEvents(trx: Transaction<Database>, req: FindingsRun): Promise<void> {
  const { asOf, runId } = req;
  await execStatement(
    trx,
    sql`insert into discrepancy_events (discrepancy_id, event, details, at)
    select d.discrepancy_id, t.event,
      jsonb_build_object('run_id', ${runId}::bigint) ||
        case when t.event = 'reopened' and t.resolution is not null
          then jsonb_build_object('resolution', t.resolution, 'reason', 'still found after it was resolved as ' || t.resolution)
          else '{}'::jsonb end ||
        jsonb_build_object('before', t.before, 'after', jsonb_build_object('expected', d.expected,
          'actual', d.actual, 'expected_amount_cents', d.expected_amount_cents, 'actual_amount_cents', d.actual_amount_cents)),
      ${asOf}::timestamptz
    from transitions t
    join lateral (select * from discrepancies d where d.discrepancy_key = t.discrepancy_key offset 0) d on true
    where t.event in ('reopened', 'changed')`,
  );
}

/** Resolves the unresolved discrepancies of the range (in scope) that no rule found; returns how many. */
async function resolveNotFound(trx: Transaction<Database>, req: FindingsRun): Promise<number> {
  const { from, to, asOf, runId } = req;
  const resolved = await sql<{ discrepancy_id: number }>`update discrepancies d
    set resolved_at = ${asOf}::timestamptz, status = 'resolved'
    where d.business_date between ${from}::date and ${to}::date and d.resolved_at is null
      and not exists (select 1 from findings f where f.discrepancy_key = d.discrepancy_key)
      and ${req.inScope ?? sql`true`}
    returning d.discrepancy_id`.execute(trx);
  if (resolved.rows.length > 0) {
    await execStatement(
      trx,
      sql`insert into discrepancy_events (discrepancy_id, event, details, at)
      select id, 'resolved', jsonb_build_object('run_id', ${runId}::bigint), ${asOf}::timestamptz
      from unnest(${resolved.rows.map((r) => r.discrepancy_id)}::bigint[]) as id`,
    );
  }
  return resolved.rows.length;
}

/** A person's fixed_in_ledger that this run no longer finds is verified, once. */
async function verifyFixedInLedger(trx: Transaction<Database>, req: FindingsRun): Promise<void> {
  const { from, to, asOf, runId } = req;
  await execStatement(
    trx,
    sql`insert into discrepancy_events (discrepancy_id, event, details, at)
    select d.discrepancy_id, 'verified', jsonb_build_object('run_id', ${runId}::bigint, 'resolution', d.resolution),
      ${asOf}::timestamptz
    from discrepancies d
    where d.resolution = 'fixed_in_ledger' and d.business_date between ${from}::date and ${to}::date
      and not exists (select 1 from findings f where f.discrepancy_key = d.discrepancy_key)
      and ${req.inScope ?? sql`true`}
      and not exists (select 1 from discrepancy_events e where e.discrepancy_id = d.discrepancy_id
        and e.event = 'verified' and e.event_id > (select max(r.event_id) from discrepancy_events r
          where r.discrepancy_id = d.discrepancy_id and r.event = 'resolved'))`,
  );
}
