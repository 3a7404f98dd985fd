import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../../db/database.ts';
import { execStatement, type RunTolerances } from '../rules/statement.ts';
import { writeOffLimit } from '../rules/tolerance-terms.ts';
import { RECON_ACTOR } from './write-offs.ts';

/** The run whose findings are written off: its account, range, tolerances and what it looked at. */
interface WriteOffRun {
  account: string;
  runId: number;
  asOf: string;
  from: string;
  to: string;
  tolerances: RunTolerances;
  /** The discrepancies (as `d`) the run looked at (reconcile/apply-findings.ts FindingsRun). */
  inScope?: RawBuilder<unknown>;
  /** The account held no discrepancy before the run (reconcile/apply-findings.ts FindingsRun). */
  first: boolean;
}

/**
 * The run's automatic write-offs, after the lifecycle (reconcile/apply-findings.ts), in the run's
 * transaction. An amount or fee difference (amount_mismatch, fee_mismatch) beyond the amount
 * tolerance, so found, and within the currency's write-off limit:
 * - open or acknowledged: resolved as written_off by 'recon', a 'resolved' event with the reason,
 *   and a row of write_offs;
 * - written off by a run before, and still within: kept; when its difference changed, the earlier
 *   amount is reversed and the new one written off, so that write_offs adds up to it;
 * - written off by a run before and now beyond the limit (the difference grew, or the limit was
 *   lowered): reopened, with its write-off reversed;
 * - written off by a run before and no longer found at all (the ledger was corrected to the
 *   provider's amount): its write-off reversed, and resolved as any discrepancy a run no longer finds
 *   (no resolution: fixed), not left written off ({@link fixGoneWriteOffs}).
 * A write-off a person made (resolved_by not 'recon') is theirs: never touched here.
 */
export async function writeOffFindings(
  trx: Transaction<Database>,
  req: WriteOffRun,
): Promise<{ writtenOff: number; reopened: number; fixed: number }> {
  const { account, runId, asOf, tolerances } = req;
  const limit = sql.raw(writeOffLimit(tolerances, 'f.currency'));
  await execStatement(
    trx,
    sql`create temp table run_write_offs on commit drop as
    select d.discrepancy_id, f.kind, f.currency, f.business_date, f.difference_cents as diff, ${limit} as limit_cents,
      d.resolved_at is null as open, abs(f.difference_cents) <= ${limit} as within,
      w.net, w.last_id
    from findings f
    join lateral (select * from discrepancies d where d.discrepancy_key = f.discrepancy_key offset 0) d on true
    left join lateral (select sum(x.amount_cents)::bigint as net, max(x.write_off_id) as last_id
      from public.write_offs x where x.discrepancy_id = d.discrepancy_id) w on true
    where f.kind in ('amount_mismatch', 'fee_mismatch') and f.difference_cents is not null and f.currency is not null
      and ((d.resolved_at is null and abs(f.difference_cents) <= ${limit})
        or (d.resolution = 'written_off' and d.resolved_by = ${RECON_ACTOR}))`,
  );
  const reason = sql`format('%s of %s cent(s) %s, within the write-off limit of %s cent(s) (tolerances version %s)',
    t.kind, t.diff, t.currency, t.limit_cents, ${tolerances.version}::bigint)`;
  // Reversals first: of write-offs no longer within, and of those whose difference changed.
  await execStatement(
    trx,
    sql`insert into public.write_offs (account, currency, amount_cents, reason, kind, business_date, discrepancy_id,
      run_id, tolerance_version, reversal_of, written_off_by, written_off_at)
    select ${account}, t.currency, -t.net,
      case when t.within then format('difference changed from %s to %s cent(s) %s', t.net, t.diff, t.currency)
        else format('%s of %s cent(s) %s, beyond the write-off limit of %s cent(s) (tolerances version %s): reopened',
          t.kind, t.diff, t.currency, t.limit_cents, ${tolerances.version}::bigint) end,
      t.kind, t.business_date, t.discrepancy_id, ${runId}::bigint, ${tolerances.version}::bigint, t.last_id,
      ${RECON_ACTOR}, ${asOf}::timestamptz
    from run_write_offs t where not t.open and coalesce(t.net, 0) <> 0 and (not t.within or t.net <> t.diff)`,
  );
  await execStatement(
    trx,
    sql`insert into public.write_offs (account, currency, amount_cents, reason, kind, business_date, discrepancy_id,
      run_id, tolerance_version, written_off_by, written_off_at)
    select ${account}, t.currency, t.diff, ${reason}, t.kind, t.business_date, t.discrepancy_id, ${runId}::bigint,
      ${tolerances.version}::bigint, ${RECON_ACTOR}, ${asOf}::timestamptz
    from run_write_offs t where t.within and (t.open or coalesce(t.net, 0) <> t.diff)`,
  );
  await execStatement(
    trx,
    sql`insert into discrepancy_events (discrepancy_id, event, details, at)
    select t.discrepancy_id, case when t.open then 'resolved' else 'reopened' end,
      jsonb_build_object('run_id', ${runId}::bigint, 'resolution', 'written_off', 'reason',
        case when t.open then ${reason} else format('%s of %s cent(s) %s is beyond the write-off limit of %s cent(s)',
          t.kind, t.diff, t.currency, t.limit_cents) end),
      ${asOf}::timestamptz
    from run_write_offs t where t.open or not t.within`,
  );
  const reopened = await execStatement(
    trx,
    sql`update discrepancies d set
      status = case when t.open then 'resolved' else 'open' end,
      resolved_at = case when t.open then ${asOf}::timestamptz end,
      resolution = case when t.open then 'written_off' end,
      resolved_by = case when t.open then ${RECON_ACTOR} end
    from run_write_offs t where d.discrepancy_id = t.discrepancy_id and (t.open or not t.within)`,
  );
  const opened = await sql<{ n: number }>`select count(*)::int as n from run_write_offs where open`.execute(
    trx,
  );
  // The workbench totals' deltas of these changes, folded as the lifecycle folds its own.
  if (reopened > 0)
    await execStatement(trx, sql`select compact_discrepancy_totals(${req.from}::date, ${req.to}::date)`);
  // A first run's discrepancies are all found (it opened them from its findings): none is gone.
  const fixed = req.first ? 0 : await fixGoneWriteOffs(trx, req);
  return { writtenOff: opened.rows[0]!.n, reopened: reopened - opened.rows[0]!.n, fixed };
}

/**
 * A run's write-off whose discrepancy the run looked at and no longer found: the difference is gone,
 * so the amount written off is reversed (write_offs is insert-only) and the discrepancy stays
 * resolved as fixed (no resolution, resolved by this run), with a 'resolved' event that says so.
 * Returns how many.
 */
async function fixGoneWriteOffs(trx: Transaction<Database>, req: WriteOffRun): Promise<number> {
  const { account, runId, asOf, from, to } = req;
  await execStatement(
    trx,
    sql`create temp table gone_write_offs on commit drop as
    select d.discrepancy_id, d.kind, d.currency, d.business_date, w.net, w.last_id
    from discrepancies d
    left join lateral (select sum(x.amount_cents)::bigint as net, max(x.write_off_id) as last_id
      from public.write_offs x where x.discrepancy_id = d.discrepancy_id) w on true
    where d.business_date between ${from}::date and ${to}::date
      and d.resolution = 'written_off' and d.resolved_by = ${RECON_ACTOR}
      and not exists (select 1 from findings f where f.discrepancy_key = d.discrepancy_key)
      and ${req.inScope ?? sql`true`}`,
  );
  const reason = sql`format('%s no longer found: the difference is gone, its write-off of %s cent(s) %s reversed',
    t.kind, coalesce(t.net, 0), t.currency)`;
  await execStatement(
    trx,
    sql`insert into public.write_offs (account, currency, amount_cents, reason, kind, business_date, discrepancy_id,
      run_id, tolerance_version, reversal_of, written_off_by, written_off_at)
    select ${account}, t.currency, -t.net, ${reason}, t.kind, t.business_date, t.discrepancy_id, ${runId}::bigint,
      ${req.tolerances.version}::bigint, t.last_id, ${RECON_ACTOR}, ${asOf}::timestamptz
    from gone_write_offs t where coalesce(t.net, 0) <> 0`,
  );
  await execStatement(
    trx,
    sql`insert into discrepancy_events (discrepancy_id, event, details, at)
    select t.discrepancy_id, 'resolved', jsonb_build_object('run_id', ${runId}::bigint, 'reason', ${reason}),
      ${asOf}::timestamptz
    from gone_write_offs t`,
  );
  return execStatement(
    trx,
    sql`update discrepancies d set resolution = null, resolved_by = null, resolved_at = ${asOf}::timestamptz
    from gone_write_offs t where d.discrepancy_id = t.discrepancy_id`,
  );
}
