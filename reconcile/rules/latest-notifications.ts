import { type RawBuilder, sql } from 'kysely';
import { rangeHoldsMostOfHistory } from './scope.ts';
import type { RuleContext } from './statement.ts';
import { analyzeWorkTables, createWorkTable } from './work-tables.ts';

/**
 * The notification that speaks for each transaction of the scope (want_nm): the latest distinct body;
 * lateness uses the earliest receipt of any body; a history that says both a final success and a
 * failure contradicts itself, whichever came last. Over most of the history (`sparse`,
 * rangeHoldsMostOfHistory) want_nm holds only the transactions of more than one body: facts joins
 * the others' one body itself (latestNotification).
 */
export async function wantNotifications(ctx: RuleContext, sparse: boolean): Promise<void> {
  // The window is ordered as `distinct on` is, over the whole partition (the aggregates do not depend
  // on the order): the workers sort by the full key once, where a window by transaction alone had
  // them sort by it and the leader sort each transaction's bodies again (2.95 s against 3.27 s of
  // server CPU at 1,000,000 rows). Its rows come through a Gather Merge and are windowed, made
  // distinct and written by the leader alone: for every transaction of a million, about 1 s of the
  // leader's CPU to write them.
  // Sparse, the window reads only the transactions of more than one body, of any kind or account (a
  // superset: the window reads the account's transaction bodies), counted in the order of
  // notifications_txn_idx from the index alone (public.notifications: the account's view reads every
  // row, 0.86 s against 0.20 s), one pass, no hash, as dup_m counts (scope.ts); every other
  // transaction has at most one body, which facts joins by hash in its parallel workers. A
  // transaction of several bodies costs what it did (docs/benchmarks.md §2, issue 30). The count is a
  // table of its own, analysed: inside want_nm's statement the planner guessed a third of the ids
  // and had each worker count them all.
  // Otherwise the scope as a semi join (its transaction ids are distinct): the planner hashes the
  // scope's narrow ids instead of the notifications' bodies (3.4-3.5 s against 3.8-3.9 s of server
  // CPU at 1,000,000 rows, the same rows). With the index in the window's full order (0046, undone
  // by 0051) nothing was left to sort and the planner read it with one process: less CPU, 4.3 s
  // against 1.8 s of wall on a quiet machine.
  let of: RawBuilder<unknown> = sql`scope_p`;
  if (sparse) {
    await createWorkTable(
      ctx,
      'nm_several',
      sql`select transaction_id from public.notifications group by transaction_id having count(*) > 1`,
    );
    await analyzeWorkTables(ctx, 'nm_several');
    of = sql`nm_several`;
  }
  await createWorkTable(
    ctx,
    'want_nm',
    sql`select distinct on (n.transaction_id) n.notification_id, n.transaction_id as target_id,
        min(n.received_at) over w as first_received_at,
        bool_or(n.status in ('SUCCESSFUL','RETURNED')) over w as any_ok,
        bool_or(n.status in ('REJECTED','FAILED')) over w as any_failed,
        n.amount_cents, n.currency, n.transaction_type, n.status, n.merchant_transaction_id, n.fee_cents
      from notifications n
      where n.kind = 'transaction' and n.transaction_id in (select transaction_id from ${of})
      window w as (partition by n.transaction_id order by n.received_at desc, n.notification_id desc
        rows between unbounded preceding and unbounded following)
      order by n.transaction_id, n.received_at desc, n.notification_id desc`,
  );
  await analyzeWorkTables(ctx, 'want_nm');
}

/**
 * The latest notification of each provider row `p` of facts (claims.ts): `w` as want_nm holds it, or,
 * sparse, `n`, the account's one transaction body of a transaction want_nm does not hold and the body
 * want_nm chose of one it holds; its earliest receipt and flags are want_nm's, or, of one body, the
 * body's own (what the window makes of a partition of one row). The same columns either way, null
 * where there is no body.
 */
export function latestNotification(sparse: boolean): { join: string; columns: string } {
  if (!sparse)
    return {
      join: 'left join want_nm w on w.target_id = p.transaction_id',
      columns: `w.notification_id, w.first_received_at, w.amount_cents as n_amount, w.currency as n_currency,
  w.transaction_type as n_type, w.status as n_status, w.merchant_transaction_id as n_mtid, w.fee_cents as n_fee,
  w.any_ok and w.any_failed as n_contradicts`,
    };
  return {
    join: `left join want_nm w on w.target_id = p.transaction_id
  left join notifications n on n.transaction_id = p.transaction_id and n.kind = 'transaction'
    and (w.notification_id is null or n.notification_id = w.notification_id)`,
    columns: `n.notification_id, coalesce(w.first_received_at, n.received_at) as first_received_at,
  n.amount_cents as n_amount, n.currency as n_currency, n.transaction_type as n_type, n.status as n_status,
  n.merchant_transaction_id as n_mtid, n.fee_cents as n_fee,
  coalesce(w.any_ok, n.status in ('SUCCESSFUL','RETURNED')) and coalesce(w.any_failed, n.status in ('REJECTED','FAILED'))
    as n_contradicts`,
  };
}

/**
 * Whether want_nm is sparse (wantNotifications): over most of the history, and only once
 * notifications has statistics (pg_class.reltuples, -1 until its first analyze or vacuum). facts then
 * joins the table itself, where otherwise it joins want_nm, a work table analysed: a first run right
 * after a load, nothing analysed, planned that join blind and took 157 s for 61,000 rows
 * (reconcile-window-cost's set-up) against 1 s with want_nm of every transaction.
 */
export async function sparseLatest(ctx: RuleContext): Promise<boolean> {
  if (!(await rangeHoldsMostOfHistory(ctx))) return false;
  const r = await sql<{ known: boolean }>`select reltuples >= 0 as known from pg_class
    where oid = 'public.notifications'::regclass`.execute(ctx.trx);
  return r.rows[0]!.known;
}

/** The server's snapshot now (`pg_current_snapshot()`), as text. */
export async function snapshotNow(ctx: RuleContext): Promise<string> {
  const r = await sql<{ s: string }>`select pg_current_snapshot()::text as s`.execute(ctx.trx);
  return r.rows[0]!.s;
}

/**
 * Whether a transaction that want_nm does not hold may have more than one transaction body now,
 * written by a writer that `seen` (taken before the count of nm_several) did not see. Each statement
 * of the run reads its own snapshot (read committed): a second body committed between the count and
 * facts' join would make two facts of one transaction. Every write to notifications notes its
 * transaction ids in recon_work.changed_keys in the writer's transaction (migration 0027), so any
 * body facts could have read beyond `seen` is among the unseen changes' ids, each looked up by
 * notifications_txn_idx (few: the writes of the run's few seconds); a write no key tells counts.
 */
export async function bodiesAddedSince(ctx: RuleContext, seen: string): Promise<boolean> {
  const r = await sql<{ added: boolean }>`with unseen as (
      select c.whole, c.transaction_ids from recon_work.changed_keys c
      where not pg_visible_in_snapshot(c.change_xid, ${seen}::pg_snapshot))
    select exists (select 1 from unseen where whole) or exists (
      select 1 from (select distinct k.t from unseen u cross join unnest(u.transaction_ids) k (t)) k
      where not exists (select 1 from nm_several s where s.transaction_id = k.t)
        and (select count(*) from notifications n where n.kind = 'transaction' and n.transaction_id = k.t) > 1) as added`.execute(
    ctx.trx,
  );
  return r.rows[0]!.added;
}
