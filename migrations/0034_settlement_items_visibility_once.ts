import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * settlement_items asks once per query, not once per row, whether the reader sees every account.
 *
 * The view (0029) kept a row when `account_visible(account, current_user)` held: a SECURITY DEFINER
 * SQL function with two subqueries, called for every item the query reads, about 18 µs a call. A
 * reconcile run reads every item of its range's days (the settlement roll-forward), about two items
 * per provider transaction: at 100,000 transactions that statement took 8.3 s, most of it these
 * calls. `sees_every_account(current_user)` is the same question asked once (an InitPlan): true for
 * the pipeline and for any login no `recon analysts grant` limits, and then account_visible is never
 * called; a limited login still has every row checked by account_visible, as before.
 *
 * The view is rewritten from its own definition (only its last condition changes), so that its
 * items, columns, comments and the views over it (daily_settlement_totals) stay as 0029 made them.
 */

const ROW_BY_ROW = 'public.account_visible(account, current_user)';
const ONCE_THEN_ROW_BY_ROW = `(select public.sees_every_account(current_user)) or ${ROW_BY_ROW}`;

/** Replaces the view's last condition (its top-level WHERE, which tests account_visible) with `condition`. */
async function setCondition(db: Kysely<any>, condition: string): Promise<void> {
  const r = await sql<{
    def: string;
  }>`select pg_get_viewdef('public.settlement_items'::regclass) as def`.execute(db);
  const def = r.rows[0]!.def;
  const where = def.lastIndexOf('\n  WHERE ');
  if (where < 0 || !def.slice(where).includes('account_visible(account, CURRENT_USER)'))
    throw new Error(
      'settlement_items does not end with its account_visible condition: its definition changed since migration 0034 was written; adapt the migration to it',
    );
  await sql
    .raw(
      `create or replace view public.settlement_items with (security_barrier) as ${def.slice(0, where)}\n  where ${condition}`,
    )
    .execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  // SECURITY DEFINER: analysts cannot read recon_private; `who` is evaluated by the caller (0010).
  await sql`create function public.sees_every_account(who name) returns boolean
    language sql stable security definer set search_path = pg_catalog, recon_private as $$
      select not exists (select 1 from recon_private.analyst_accounts a where a.role_name = $1)
    $$`.execute(db);
  await sql`comment on function public.sees_every_account(name) is 'Whether login who may see rows of every account: true unless recon analysts grant limited it to some accounts.'`.execute(
    db,
  );
  await sql`grant execute on function public.sees_every_account(name) to public`.execute(db);
  await setCondition(db, ONCE_THEN_ROW_BY_ROW);
}

export async function down(db: Kysely<any>): Promise<void> {
  await setCondition(db, ROW_BY_ROW);
  await sql`drop function public.sees_every_account(name)`.execute(db);
}
