import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * settlement_items can be read in parallel, and its provider branch is a join (issue 30, section 2).
 *
 * A first run reads every item of its range's days (the settlement roll-forward): at 1,000,000
 * provider transactions that statement took 11.75 s on one core, for two reasons:
 * - the provider branch asked of every payin whether another row with its merchant transaction id had
 *   been returned before it: an EXISTS inside the CASE that names the component, which PostgreSQL
 *   runs as a SubPlan, one index probe per payin, never as a join. The branch is now two: the re-debits
 *   (`exists`, a semi join) and every other successful transaction (`not exists`, an anti join), each
 *   against the few returned originals; the planner hashes them on a full range and probes the index
 *   for a few days, as before. The same rows: a row is a representment when it is neither of unknown
 *   type nor CREDIT and such a return exists, and the anti join's condition holds exactly then.
 * - sees_every_account and account_visible (the view's condition, and the tables' row-level
 *   policies) were PARALLEL UNSAFE, as every SQL function is unless declared otherwise, which keeps
 *   any statement that reads the view on one core. They only read recon_private.analyst_accounts:
 *   PARALLEL SAFE (their `set search_path` is a function-local setting, which parallel workers allow).
 *
 * The view is rewritten from its own definition (only the provider branch changes), so that its
 * columns, comments and the views over it (daily_settlement_totals) stay as 0029 and 0034 made them.
 */

const FUNCTIONS = ['public.sees_every_account(name)', 'public.account_visible(text, name)'];

/** Where the provider branch begins in pg_get_viewdef's text of the view: its first branch. */
const BRANCH_START = 'FROM ( SELECT p.account,';

/** The re-debit test of provider transaction p: an earlier return of another row with its merchant transaction id. */
const RETURNED_BEFORE = (also: string) => `(select 1 from provider_transactions o
      join provider_returns r on r.account = o.account and r.original_transaction_id = o.transaction_id
      where o.account = p.account and o.merchant_transaction_id = p.merchant_transaction_id
        and o.transaction_id <> p.transaction_id and r.returned_on <= p.transaction_on${also})`;

const PROVIDER_COLUMNS = (component: string) => `select p.account, p.transaction_on as business_date,
    p.currency::text as currency, 'T:' || p.transaction_id as pair_key, 'provider' as side, ${component} as component,
    p.amount_cents, coalesce(p.fee_cents, 0)::bigint as fee_cents,
    p.transaction_id, null::text as merchant_transaction_id, null::text as return_transaction_id,
    null::text as adjustment_key, false as in_flight
  from provider_transactions p`;

/** 0029's provider branch, as 0034 left it. */
const OLD_BRANCH = `${PROVIDER_COLUMNS(`case when p.transaction_type is null then 'unknown_type'
         when p.transaction_type = 'CREDIT' then 'payout'
         when exists ${RETURNED_BEFORE('')} then 'representment'
         else 'payin' end`)}
  where p.status = 'SUCCESSFUL'`;

/** The same rows as two branches, each a join against the returned originals. */
const NEW_BRANCHES = `${PROVIDER_COLUMNS(`case when p.transaction_type is null then 'unknown_type'
         when p.transaction_type = 'CREDIT' then 'payout' else 'payin' end`)}
  where p.status = 'SUCCESSFUL' and not exists ${RETURNED_BEFORE(" and p.transaction_type <> 'CREDIT'")}
  union all
  ${PROVIDER_COLUMNS(`'representment'::text`)}
  where p.status = 'SUCCESSFUL' and p.transaction_type <> 'CREDIT' and exists ${RETURNED_BEFORE('')}`;

/**
 * Replaces the view's provider branch, the first `branches` branches of its item union (1 before this
 * migration, 2 after), with `text`; `marker` must be in what is replaced.
 */
async function replaceProviderBranch(
  db: Kysely<any>,
  branches: number,
  marker: string,
  text: string,
): Promise<void> {
  const r = await sql<{
    def: string;
  }>`select pg_get_viewdef('public.settlement_items'::regclass) as def`.execute(db);
  const def = r.rows[0]!.def;
  const start = def.indexOf(BRANCH_START);
  let end = start;
  for (let i = 0; i < branches && end >= 0; i++) end = def.indexOf('UNION ALL', end + 1);
  if (start < 0 || end < 0 || !def.slice(start, end).includes(marker))
    throw new Error(
      'settlement_items does not begin with the provider branch migration 0037 was written for: its definition changed; adapt the migration to it',
    );
  const view = `${def.slice(0, start)}FROM ( ${text}\n  ${def.slice(end)}`;
  await sql
    .raw(`create or replace view public.settlement_items with (security_barrier) as ${view}`)
    .execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const f of FUNCTIONS) await sql.raw(`alter function ${f} parallel safe`).execute(db);
  await replaceProviderBranch(db, 1, "THEN 'representment'::text", NEW_BRANCHES);
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceProviderBranch(db, 2, "'representment'::text AS component", OLD_BRANCH);
  for (const f of FUNCTIONS) await sql.raw(`alter function ${f} parallel unsafe`).execute(db);
}
