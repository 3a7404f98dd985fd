import { sql } from 'kysely';
import { exec, type RuleContext } from './statement.ts';

/**
 * A run's claims move items of the roll-forward between days outside its range: a ledger entry
 * booked on a day of another range counts on the day of the provider row or return that claims it
 * (settlement_items), so that a claim this run makes or drops changes that other day. A run over
 * changed keys of the other range must then look at the entry again, and only the keys written
 * since its dates were last matched tell it (reconcile/incremental.ts): the run notes the merchant
 * transaction ids of the ledger entries whose claim it changed in recon_work.changed_keys, as a
 * write would. Only claims that changed are noted, so that a run that changes none notes nothing.
 *
 * Only a run over changed keys of dates matched before reads the notes (reconcile/incremental.ts):
 * while no date outside the run's range has a matching state (recon_work.matched_days), no run can
 * read them, and the run notes nothing. A later run takes its snapshot after this one commits (runs
 * queue on recon_work.reconcile_lock), so it sees the claims themselves. This is a first run's case
 * (of a warehouse, or of an account: the dates are any account's, a ledger entry's note is global),
 * whose every claim is new: noting them cost it 1.2 s at 1,000,000 rows, to note none.
 */

/** A ledger booking on an Eastern date of the run's range (the ledger's date index's expression). */
const bookedInRange = (ctx: RuleContext) =>
  sql`(l.booked_at at time zone 'America/Toronto')::date between ${ctx.from}::date and ${ctx.to}::date`;

/** Before claimReturns: the return claims of the scope's returns as they were (returns are few). */
export async function keepReturnClaims(ctx: RuleContext): Promise<void> {
  await exec(
    ctx,
    sql`create temp table return_claims_before on commit drop as
      select return_transaction_id, ledger_merchant_transaction_id as mtid from return_matches
      where return_transaction_id = any (array(select return_transaction_id from scope_r))`,
  );
}

/**
 * After the claims: notes the ledger entries whose claimant changed. Provider claims from facts
 * (tm_mtid, the entry a row claimed before the run; l_mtid, the one it claims now: a row of another
 * range that lost its claim to a row of this one is the other side of a row of facts); return claims
 * against keepReturnClaims'.
 */
export async function noteClaimMoves(ctx: RuleContext): Promise<void> {
  if (ctx.dryRun || !(await otherDatesMatched(ctx))) return;
  // The entries are read by key through each table's index (`= any (array(...))`): as correlated
  // `exists` the planner hashed the whole ledger and provider tables on a first run, whose every claim
  // is new (test/integration/reconcile-window-cost.test.ts).
  await exec(
    ctx,
    sql`insert into recon_work.changed_keys (merchant_transaction_ids)
      with moved as materialized (
        select tm_mtid as mtid from facts where tm_mtid is distinct from l_mtid and tm_mtid is not null
        union select l_mtid from facts where tm_mtid is distinct from l_mtid and l_mtid is not null
        union select mtid from (
          (select return_transaction_id, mtid from return_claims_before
           except select return_transaction_id, ledger_merchant_transaction_id from return_matches
             where return_transaction_id = any (array(select return_transaction_id from scope_r)))
          union
          (select return_transaction_id, ledger_merchant_transaction_id from return_matches
             where return_transaction_id = any (array(select return_transaction_id from scope_r))
           except select return_transaction_id, mtid from return_claims_before)) r
        where mtid is not null)
      select array_agg(mtid) from moved
      -- The days of the range this run computes again itself: only a move that reaches a day outside
      -- it is noted (a first run makes every claim of its range, and notes none of those).
      where mtid = any (array(
          select l.merchant_transaction_id from merchant_ledger l
          where l.merchant_transaction_id = any (array(select mtid from moved)) and not ${bookedInRange(ctx)}
          union all
          select p.merchant_transaction_id from provider_transactions p
          where p.merchant_transaction_id = any (array(select mtid from moved))
            and p.transaction_on not between ${ctx.from}::date and ${ctx.to}::date))
      having count(*) > 0`,
  );
}

/** Whether a date outside the run's range has a matching state, of any account (see the module's comment). */
async function otherDatesMatched(ctx: RuleContext): Promise<boolean> {
  const r = await sql<{ any: boolean }>`select exists (select 1 from recon_work.matched_days
    where business_date not between ${ctx.from}::date and ${ctx.to}::date) as any`.execute(ctx.trx);
  return r.rows[0]!.any;
}
