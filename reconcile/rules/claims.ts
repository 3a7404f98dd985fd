import { type RawBuilder, sql } from 'kysely';
import { manualItemJoin } from './manual-matches.ts';
import { rangeHoldsMostOfHistory } from './scope.ts';
import { keyJoin } from './sql-terms.ts';
import { accountHoldsAny, exec, type RuleContext } from './statement.ts';
import { analyzeWorkTables, createWorkTable, workTable } from './work-tables.ts';

/**
 * The ledger entry of a provider row's merchant transaction id, for rank 1 only (the others are
 * duplicates and claim nothing): the join's condition (FACTS_JOINS) asks for the rank, so that the
 * rules' conditions compare the entry's columns as they are, where a `case` on each column was
 * evaluated again wherever the suspects' condition names one (eleven times for every fact, issue 30).
 * The ledger's key is unique, so the join itself never adds rows. A provider row or a ledger entry
 * that a person matched by hand (mp, ml: manual-matches.ts) claims nothing by its key: the manual
 * match pairs it. ml is the manual match of the provider row's key, which is the entry's when there is
 * one.
 */
const RANK_1_LEDGER = [
  ['merchant_transaction_id', 'l_mtid'],
  ['amount_cents', 'l_amount'],
  ['currency', 'l_currency'],
  ['transaction_type', 'l_type'],
  ['status', 'l_status'],
]
  .map(([col, as]) => `l.${col} as ${as}`)
  .join(', ');

/**
 * Deletes the claims of `table` whose `column` is the `key` of a suspect with a stale claim
 * (STALE_CLAIMS). The keys are settled into a table of their own and analysed first: with the
 * condition inside the delete, the planner guessed a row or two, scanned facts once per claim of the
 * table, and a month's first run among 1,000,000 rows took 10 minutes (bench/nightly.ts).
 */
async function deleteStaleClaims(
  ctx: RuleContext,
  table: keyof typeof STALE_CLAIMS,
  column: string,
  key: string,
): Promise<void> {
  const stale = `stale_${table}` as const;
  await createWorkTable(
    ctx,
    stale,
    sql`select ${sql.raw(key)} as key from suspects f where ${sql.raw(STALE_CLAIMS[table])}`,
  );
  await analyzeWorkTables(ctx, stale);
  await exec(
    ctx,
    sql`delete from ${sql.table(table)} m using ${sql.raw(stale)} s where m.${sql.id(column)} = s.key`,
  );
}

/**
 * The facts (`f`) whose current claim facts no longer wants: a notification claim of another body or
 * receipt (claimNotifications), a ledger claim of another entry (claimLedgerEntries). The run's
 * suspects hold these rows too (run-rules.ts), so that the stale keys are read from that small table
 * instead of a scan of every fact each (0.2 s apiece at 1,000,000 rows, issue 30).
 */
export const STALE_CLAIMS = {
  notification_matches: `f.nm_id is not null
    and (f.nm_id, f.nm_first_received_at) is distinct from (f.notification_id, f.first_received_at)`,
  transaction_matches: `f.tm_mtid is not null and f.tm_mtid is distinct from f.l_mtid`,
} as const;

/**
 * The sets claims are made of, for the provider transactions of the scope (scope_p): the notification
 * that speaks for each (want_nm), its legacy twin (want_sm), and `facts`, which the rules read.
 */
export async function prepareFacts(ctx: RuleContext, suspect: RawBuilder<unknown>): Promise<void> {
  await wantClaims(ctx);
  await buildFacts(ctx, suspect);
}

/**
 * Claims: provider transactions ↔ ledger (rank 1 of each merchant transaction id), notifications ↔
 * provider transactions (the latest distinct body), JSON report rows ↔ legacy rows, as `facts` says
 * (prepareFacts), the stale ones found among the suspects. Only what changed is written, so that a
 * re-run over unchanged data writes nothing. Returns the counts of claims.
 */
export async function claimTransactions(
  ctx: RuleContext,
): Promise<{ transactions: number; notifications: number; legacy: number }> {
  // No rule reads these claims back: the rules read what facts says each row should claim.
  if (!ctx.dryRun) {
    await claimNotifications(ctx);
    await claimLegacyRows(ctx);
    await claimLedgerEntries(ctx);
  }
  // One scan of facts: each notification of want_nm is the notification_id of one fact (its target is
  // a row of scope_p, as every fact is), so the facts count both claims (want_nm read again cost a
  // scan of its million rows at 1,000,000 rows, issue 30).
  const counts = await sql<{ t: number; n: number; g: number }>`select
      count(l_mtid)::int as t, count(notification_id)::int as n, (select count(*) from want_sm)::int as g
      from facts`.execute(ctx.trx);
  const row = counts.rows[0]!;
  return { transactions: row.t, notifications: row.n, legacy: row.g };
}

/** The notification that speaks for each transaction of the scope (want_nm) and its legacy twin (want_sm). */
async function wantClaims(ctx: RuleContext): Promise<void> {
  // The latest distinct body speaks for the transaction; lateness uses the earliest receipt of any body;
  // a history that says both a final success and a failure contradicts itself, whichever came last.
  // Otherwise the scope as a semi join (its transaction ids are distinct): the planner hashes the scope's narrow
  // ids instead of the notifications' bodies (3.4-3.5 s against 3.8-3.9 s of server CPU at 1,000,000
  // rows, the same rows). The window is ordered as `distinct on` is, over the whole partition (the
  // aggregates do not depend on the order): the workers sort by the full key once, where a window
  // by transaction alone had them sort by it and the leader sort each transaction's bodies again
  // (an incremental sort above the window; 2.95 s against 3.27 s of server CPU at 1,000,000 rows).
  // A full run over most of the history (rangeHoldsMostOfHistory) reads every transaction notification
  // of the account, not only the scope's: in transaction order from notifications_txn_idx, each transaction's few bodies sorted
  // apart (an incremental sort), where the semi join with the scope had the workers sort every body by
  // the full key (2.8-3.05 s against 3.25-3.57 s of server CPU at 1,000,000 rows, alternated, issue 30).
  // With the index in the window's full order (0046, undone by 0051) nothing was left to sort and the
  // planner read it with one process: less CPU, 4.3 s against 1.8 s of wall on a quiet machine.
  // facts joins want_nm by target, so the others' rows are read by nobody.
  const inScope = (await rangeHoldsMostOfHistory(ctx))
    ? sql``
    : sql`and n.transaction_id in (select transaction_id from scope_p)`;
  await createWorkTable(
    ctx,
    'want_nm',
    sql`select distinct on (n.transaction_id) n.notification_id, n.transaction_id as target_id,
        min(n.received_at) over w as first_received_at,
        bool_or(n.status in ('SUCCESSFUL','RETURNED')) over w as any_ok,
        bool_or(n.status in ('REJECTED','FAILED')) over w as any_failed,
        n.amount_cents, n.currency, n.transaction_type, n.status, n.merchant_transaction_id, n.fee_cents
      from notifications n
      where n.kind = 'transaction' ${inScope}
      window w as (partition by n.transaction_id order by n.received_at desc, n.notification_id desc
        rows between unbounded preceding and unbounded following)
      order by n.transaction_id, n.received_at desc, n.notification_id desc`,
  );
  await createWorkTable(
    ctx,
    'want_sm',
    sql`select p.transaction_id from provider_transactions p join scope_p using (transaction_id)
      join legacy_transactions g on ${sql.raw(keyJoin('g', 'p', 'transaction_id'))}
      where p.source = 'report-transactions'`,
  );
  await analyzeWorkTables(ctx, 'want_nm', 'want_sm');
}

/**
 * One row per provider transaction of the scope with what the rules compare (WIDE_FACTS). l_* is the
 * ledger entry it should claim, tm_mtid the one it claims now; nm_* the notification claim it holds
 * now. Carrying the current claims here makes the claims below a comparison of two columns instead of
 * index probes of the claim tables for every row of the range. mm_id is the manual match a provider
 * row is in (reconcile/rules/manual-matches.ts).
 *
 * `facts` keeps, of every row, only the columns its readers take from every row (NARROW_FACTS: the
 * claims, their counts and moves, the fee rule, missing_at_provider over changed keys, the
 * roll-forward's claimed rows), and the whole wide row as one value, `suspect`, for the few rows the
 * suspects' condition (`suspect`: run-rules.ts) holds for, null for the others: the suspects are then
 * a scan of that column (suspectRows). Each of a million rows is handed from the parallel workers to
 * the leader, which writes them alone: with the 38 columns of every rule, facts took more than the
 * floor's whole join, and the suspects' condition, evaluated here by the workers, was a second scan of
 * every fact (docs/benchmark-record.md §2, issue 30). The wide row's type is that of the empty work
 * table suspect_row.
 *
 * facts, and the sets it joins (ranked, want_nm, want_sm), are work tables (work-tables.ts): in a full
 * run nothing the statement reads is a temporary table, so parallel workers can run all of its joins
 * (and its readers' scans: 1.45x on those statements, issue 30).
 */
async function buildFacts(ctx: RuleContext, suspect: RawBuilder<unknown>): Promise<void> {
  // A full run reads the range by date (an index range scan). A run over changed keys reads its
  // scope_p's rows by key first: within the one statement below, the planner scanned every provider
  // row of the warehouse in parallel to find a few (15 s of a 19 s run at 1,000,000 rows).
  if (ctx.scoped) {
    await exec(
      ctx,
      sql`create temp table scope_rows on commit drop as select p.* from scope_p s
        cross join lateral (select * from provider_transactions p where p.transaction_id = s.transaction_id) p`,
    );
    await exec(ctx, sql`analyze scope_rows`);
  }
  const rows = ctx.scoped ? sql`scope_rows p` : sql`provider_transactions p`;
  const inScope = ctx.scoped
    ? sql`true`
    : sql`p.transaction_on between ${ctx.from}::date and ${ctx.to}::date`;
  const wide = sql`select ${sql.raw(WIDE_FACTS)} from ${rows} ${sql.raw(FACTS_JOINS)} where ${inScope}`;
  // Only its row type is read: no view over it.
  await exec(ctx, sql`create unlogged table ${sql.raw(workTable('suspect_row'))} as ${wide} with no data`);
  await createWorkTable(
    ctx,
    'facts',
    sql`select ${sql.raw(NARROW_FACTS)},
        case when ${suspect} then row(f.*)::${sql.raw(workTable('suspect_row'))} end as suspect
      from (${wide}) f`,
  );
  await analyzeWorkTables(ctx, 'facts');
}

/** The columns of `facts` (buildFacts) besides `suspect`: what its readers take from every row. */
const NARROW_FACTS = [
  'transaction_id',
  'merchant_transaction_id',
  'transaction_on',
  'currency',
  'amount_cents',
  'fee_cents',
  'status',
  'transaction_type',
  'product',
  'l_mtid',
  'tm_mtid',
  'notification_id',
  'first_received_at',
  'nm_id',
  'nm_first_received_at',
  'mm_id',
]
  .map((c) => `f.${c}`)
  .join(', ');

/** Every column a rule that reads the suspects compares or reports (run-rules.ts), of `p` and its joins. */
const WIDE_FACTS = `p.transaction_id, p.merchant_transaction_id, p.transaction_on, p.currency, p.amount_cents, p.fee_cents,
  p.status, p.raw_status, p.transaction_type, p.transaction_at, p.notify_status, p.product, p.source,
  coalesce(r.rank, 1) as rank,
  ${RANK_1_LEDGER}, tm.merchant_transaction_id as tm_mtid,
  w.notification_id, w.first_received_at, w.amount_cents as n_amount, w.currency as n_currency,
  w.transaction_type as n_type, w.status as n_status, w.merchant_transaction_id as n_mtid, w.fee_cents as n_fee,
  w.any_ok and w.any_failed as n_contradicts,
  nm.notification_id as nm_id, nm.first_received_at as nm_first_received_at,
  g.transaction_id as g_id, g.amount_cents as g_amount, g.currency as g_currency, g.status as g_status,
  g.fee_cents as g_fee, g.merchant_transaction_id as g_mtid, mp.match_id as mm_id`;

/** Each provider row's rank, ledger entry, manual matches, current claims, latest notification and legacy twin. */
const FACTS_JOINS = `left join ranked r using (transaction_id)
  ${manualItemJoin('mp', 'provider', 'p.transaction_id')}
  ${manualItemJoin('ml', 'ledger', 'p.merchant_transaction_id')}
  left join merchant_ledger l on ${keyJoin('l', 'p', 'merchant_transaction_id')}
    and coalesce(r.rank, 1) = 1 and mp.match_id is null and ml.match_id is null
  left join transaction_matches tm on tm.transaction_id = p.transaction_id
  left join notification_matches nm on nm.kind = 'transaction' and nm.target_id = p.transaction_id
  left join want_nm w on w.target_id = p.transaction_id
  left join want_sm sm on sm.transaction_id = p.transaction_id
  left join legacy_transactions g on g.transaction_id = sm.transaction_id`;

/**
 * The suspects (run-rules.ts): the wide rows facts kept (buildFacts), as columns. `is distinct from
 * null` asks whether the row is there: `is not null` of a row asks whether all its fields are.
 */
export function suspectRows(): RawBuilder<unknown> {
  return sql`select (f.suspect).* from facts f where f.suspect is distinct from null`;
}

/**
 * Notification claims, written only where they changed (a re-run over unchanged data writes
 * nothing), so that the other side's UNIQUE constraint is only probed for those.
 */
async function claimNotifications(ctx: RuleContext): Promise<void> {
  await deleteStaleClaims(ctx, 'notification_matches', 'notification_id', 'f.nm_id');
  // Without ON CONFLICT (the set excludes what is claimed, and speculative insertion doubles the
  // cost), sorted by target (18.4 s against 6.4-8.7 s unsorted at 1,000,000 rows, issue 30). The sort
  // also settles the whole set before the first row is written, so the anti-join never reads the rows
  // this insert adds (read as it went, the table being filled was rescanned per row). Selected
  // straight from facts: a temporary table of the set first cost a write and a read of it.
  // The not-exists can find nothing today: a notification is wanted only by its own transaction (its
  // transaction id and kind come from its body and are never rewritten:
  // ingest/notifications/store-notification.ts), and that transaction's claim of any other
  // notification or receipt was deleted as stale above. It stays as a guard, free in a first run
  // (unlessNone); its ledger twin is needed (test/integration/claims-held.test.ts).
  await exec(
    ctx,
    sql`insert into notification_matches (notification_id, kind, target_id, first_received_at, rule, run_id)
      select f.notification_id, 'transaction', f.transaction_id, f.first_received_at, 'transaction_id', ${ctx.runId}::bigint
      from facts f
      where f.notification_id is not null
        and (f.nm_id, f.nm_first_received_at) is distinct from (f.notification_id, f.first_received_at)
        ${await unlessNone(ctx, 'notification_matches', 'kind, target_id', sql`not exists (select 1 from notification_matches m where m.notification_id = f.notification_id)`)}
      order by f.transaction_id`,
  );
}

/**
 * `and <condition>`, the claims a new claim must not take, unless the account holds no claim in
 * `table` (accountHoldsAny, `keyOrder` its key after the account): then the condition holds for every
 * row and is left out. The run's lock (reconcile-range.ts) keeps every other writer of the claim
 * tables out of its transaction. A first run's claim tables are empty,
 * and the planner, told so, probed them with a scan per fact, a few hundred nanoseconds each: 975,000
 * and 995,000 rescans of an empty table at 1,000,000 rows, about 0.3 s of CPU each
 * (docs/benchmark-record.md §2). With claims held the condition is needed:
 * test/integration/claims-held.test.ts fails without it.
 */
async function unlessNone(
  ctx: RuleContext,
  table: string,
  keyOrder: string,
  condition: RawBuilder<unknown>,
): Promise<RawBuilder<unknown>> {
  return (await accountHoldsAny(ctx.trx, table, keyOrder)) ? sql`and ${condition}` : sql``;
}

/** JSON report rows ↔ legacy rows of the same transaction id. */
async function claimLegacyRows(ctx: RuleContext): Promise<void> {
  await exec(
    ctx,
    sql`delete from source_matches m where m.transaction_id in (select transaction_id from scope_p)
      and not exists (select 1 from want_sm w where w.transaction_id = m.transaction_id)`,
  );
  await exec(
    ctx,
    sql`insert into source_matches (transaction_id, legacy_transaction_id, run_id)
      select transaction_id, transaction_id, ${ctx.runId}::bigint from want_sm
      on conflict do nothing`,
  );
}

/** Provider transactions ↔ ledger entries: rank 1 of each merchant transaction id claims its entry. */
async function claimLedgerEntries(ctx: RuleContext): Promise<void> {
  await deleteStaleClaims(ctx, 'transaction_matches', 'transaction_id', 'f.transaction_id');
  // Rows of another range that lost their claim to a row of this one (their rank is no longer 1).
  await exec(
    ctx,
    sql`delete from transaction_matches tm where tm.transaction_id in (select transaction_id from ranked where rank > 1)`,
  );
  // Straight from facts, sorted, as the notification claims are (claimNotifications).
  await exec(
    ctx,
    sql`insert into transaction_matches (transaction_id, merchant_transaction_id, rule, run_id)
      select f.transaction_id, f.l_mtid, 'merchant_transaction_id', ${ctx.runId}::bigint from facts f
      where f.l_mtid is not null and f.tm_mtid is distinct from f.l_mtid
        ${await unlessNone(ctx, 'transaction_matches', 'transaction_id', sql`not exists (select 1 from transaction_matches tm where tm.merchant_transaction_id = f.l_mtid)`)}
      order by f.transaction_id`,
  );
}
