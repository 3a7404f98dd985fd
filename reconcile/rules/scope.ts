import { sql } from 'kysely';
import { fillChangedScope } from './changed-scope.ts';
import { createFindingsTable } from './findings.ts';
import { fillReturnsScope } from './returns-scope.ts';
import { manuallyMatchedIds } from './manual-matches.ts';
import { keyJoin, type Sql } from './sql-terms.ts';
import { exec, type RuleContext } from './statement.ts';
import { analyzeWorkTables, createWorkTable, workTable } from './work-tables.ts';

/**
 * Temporary tables of one run: the scope and the findings. Dropped at commit. The scope is the rows
 * the run looks at: scope_p (provider transactions), scope_l (ledger entries) and scope_r (provider
 * returns) of the range; every rule reads one of them (or facts, built from scope_p). A full run
 * takes every row of the range (of the ledger, those a rule can flag: fillRangeScope); a run over
 * changed keys (ctx.scoped) the rows those keys reach.
 */
export async function prepareScope(ctx: RuleContext): Promise<void> {
  await exec(ctx, createFindingsTable());
  if (ctx.scoped) {
    await fillChangedScope(ctx);
    await exec(ctx, sql`analyze scope_p, scope_l, scope_r`);
  } else {
    await fillRangeScope(ctx);
    await exec(ctx, sql`analyze scope_r`);
  }
  await rankDuplicates(ctx);
  await fillReturnsScope(ctx);
}

/**
 * Every provider transaction and return of the range, and its ledger entries that a rule can flag
 * (below). scope_p and scope_l are work tables (work-tables.ts), not temporary ones: the statements
 * that join them (the latest notifications, the duplicate search, missing_at_provider) can then run
 * in parallel. Over a short range of a long history scope_p is a table, analysed, rather than a view
 * of the range: without statistics on the warehouse's tables (a first run right after a load), a view
 * left the planner guessing, and the latest notifications of a two-year range ran for minutes
 * (reconcile-window-cost's set-up). Over most of the history (rangeHoldsMostOfHistory) it is a view of
 * the range's provider rows: the latest notifications no longer read it there (claims.ts), its readers
 * (scope_l, the duplicate search, the legacy twins) scan the provider rows in parallel instead of the
 * copy, and the copy, written by the leader alone, is not made (at 1,000,000 rows those statements
 * with the copy 4.9-5.9 s wall and 2.89-3.06 s of server CPU, without it 3.4-3.9 s and 2.75-2.89 s,
 * alternated, issue 30). The view is dropped with the work tables (dropWorkTables).
 */
async function fillRangeScope(ctx: RuleContext): Promise<void> {
  const { from, to } = ctx;
  const rangeRows = (a: Sql, b: Sql) => sql`select transaction_id, merchant_transaction_id as mtid
    from provider_transactions where transaction_on between ${a}::date and ${b}::date`;
  if (await rangeHoldsMostOfHistory(ctx)) {
    // A view's definition takes no parameters: the dates are literals (checked dates of the run).
    await exec(ctx, sql`create temp view scope_p as ${rangeRows(sql.lit(from), sql.lit(to))}`);
  } else {
    await createWorkTable(ctx, 'scope_p', rangeRows(from, to));
    await analyzeWorkTables(ctx, 'scope_p');
  }
  // Ledger entries booked on an Eastern date of the range that a ledger rule can flag: the RETURN
  // entries (return_missing_at_provider) and those that no provider row of the range answers for (no
  // manual match holds it), flagged `unanswered` (missing_at_provider's unanswered_l). The others, nearly
  // every entry, no rule reads: a full run does not write them (the copy of a million entries took
  // 0.6 s at 1,000,000 rows, and unanswered_l's anti join with every fact as much again, issue 30).
  // The answers are read from scope_p (its two columns) rather than from facts, which is not built yet;
  // `distinct` only folds a RETURN entry that several provider rows answer for, after the join (made
  // distinct before it, the million ids were hashed by the leader alone: 8.5 s at 1,000,000 rows).
  // The manual matches' provider ids are read once and hashed (an anti join), not looked up for each
  // provider row: with no manual match the planner took the table's one-row estimate and scanned it
  // again for each of the million rows (1.82-1.93 s of server CPU against 2.04-2.22 s, issue 30).
  await createWorkTable(
    ctx,
    'scope_l',
    sql`select distinct l.merchant_transaction_id, l.transaction_type,
        (l.booked_at at time zone 'America/Toronto')::date as booked_on, a.mtid is null as unanswered
      from merchant_ledger l
      left join (select s.mtid from scope_p s
        left join ${sql.raw(manuallyMatchedIds('provider'))} mm on mm.item_id = s.transaction_id
        where mm.item_id is null) a on a.mtid = l.merchant_transaction_id
      where l.booked_at >= (${from}::date)::timestamp at time zone 'America/Toronto'
        and l.booked_at < ((${to}::date + 1))::timestamp at time zone 'America/Toronto'
        and (a.mtid is null or l.transaction_type = 'RETURN')`,
  );
  await analyzeWorkTables(ctx, 'scope_l');
  await exec(
    ctx,
    sql`create temp table scope_r on commit drop as
      select return_transaction_id from provider_returns where returned_on between ${from}::date and ${to}::date`,
  );
}

/**
 * Whether a full run's range holds at least half of the history's account-days
 * (provider_transaction_days, kept exact by every write): then a statement may read a whole table of
 * the account once, by its order or in parallel, where restricting it to the scope cost more than the
 * rows it leaves out (the latest notifications: claims.ts). A short range of a long history reads its
 * rows by their indexes instead (reconcile-window-cost: 3 days of two years). A run over changed keys
 * never does. Asked once per run (the scope, the latest notifications and the settlement window
 * each ask): the three choices are the same, even if a load commits a new day between them.
 */
export function rangeHoldsMostOfHistory(ctx: RuleContext): Promise<boolean> {
  if (ctx.scoped) return Promise.resolve(false);
  let answer = mostOfHistory.get(ctx);
  if (answer === undefined) {
    answer = countMostOfHistory(ctx);
    mostOfHistory.set(ctx, answer);
  }
  return answer;
}

const mostOfHistory = new WeakMap<RuleContext, Promise<boolean>>();

async function countMostOfHistory(ctx: RuleContext): Promise<boolean> {
  const r = await sql<{
    most: boolean;
  }>`select 2 * count(*) filter (where account = current_setting('recon.run_account')
      and transaction_on between ${ctx.from}::date and ${ctx.to}::date) >= count(*) as most
    from public.provider_transaction_days`.execute(ctx.trx);
  return r.rows[0]!.most;
}

/**
 * The duplicate groups of the scope's merchant transaction ids, ranked: rank 1 claims the ledger
 * entry, the others are duplicates.
 */
async function rankDuplicates(ctx: RuleContext): Promise<void> {
  // Merchant transaction ids of the scope that more than one provider row carries (in any range):
  // another row than the scope's own carries it. Over most of the history (rangeHoldsMostOfHistory),
  // the ids of more than one of the account's rows, counted in the order of their index
  // (provider_transactions_mtid_idx, one pass, no hash), each then looked up in the scope (the limit
  // keeps it a probe of the same index for each of the few ids, not a second scan of the range): at
  // 1,000,000 rows 0.21-0.25 s of server CPU against 1.41-1.45 s for the semi join, which hashed every
  // provider row to probe it with every row of the scope (docs/benchmark-record.md §2). Otherwise a
  // semi join, whose result is the few duplicates, instead of counting the provider rows of every
  // id of the scope (1.0 s against 1.5 s of server CPU at 1,000,000 rows), and over a short range
  // of a long history not a count of the whole history's ids. A work table (work-tables.ts), so
  // that in a full run parallel workers share it.
  await createWorkTable(
    ctx,
    'dup_m',
    (await rangeHoldsMostOfHistory(ctx))
      ? sql`select d.mtid from (select merchant_transaction_id as mtid from provider_transactions
          group by merchant_transaction_id having count(*) > 1) d
        where exists (select 1 from (select 1 from scope_p s where s.mtid = d.mtid limit 1) s)`
      : sql`select distinct s.mtid from scope_p s
        where exists (select 1 from provider_transactions p
          where ${sql.raw(keyJoin('p', 's', 'merchant_transaction_id', 'mtid'))} and p.transaction_id <> s.transaction_id)`,
  );
  await analyzeWorkTables(ctx, 'dup_m');
  // Rank every provider row of those ids. Ids with a single provider row are rank 1 without ranking
  // (most of them: no sort of the range).
  await createWorkTable(
    ctx,
    'ranked',
    sql`select p.transaction_id, p.merchant_transaction_id as mtid, row_number() over w as rank
      from provider_transactions p
      join dup_m m on m.mtid = p.merchant_transaction_id
      left join merchant_ledger l on ${sql.raw(keyJoin('l', 'p', 'merchant_transaction_id'))}
      window w as (partition by p.merchant_transaction_id order by
        (l.merchant_transaction_id is not null and p.amount_cents = l.amount_cents and p.currency = l.currency
          and p.transaction_type is not distinct from l.transaction_type) desc,
        (p.status = 'SUCCESSFUL') desc, p.transaction_at nulls last, p.transaction_id)`,
  );
  // duplicate_merchant_transaction reads each suspect's group and its first row by merchant
  // transaction id: without an index each is a scan of the whole table (22,000 duplicates took 508 s).
  await exec(ctx, sql`create index on ${sql.raw(workTable('ranked'))} (mtid, rank)`);
  await analyzeWorkTables(ctx, 'ranked');
}
