import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * A person's resolution or reopening of a discrepancy notes the discrepancy's keys in
 * recon_work.changed_keys (migration 0027), so that the next run over changed keys looks at it as a
 * full run does: resolves again one it no longer finds, reopens a fixed_in_ledger still found. A
 * discrepancy that names no key (settlement_unexplained: a day and a currency) noted nothing, and
 * the run did not look at it: reopened on a day that balances, it stayed open where a full run
 * resolved it. Its business date is now noted (changed_keys.business_dates, migration 0035): the
 * run computes the roll-forward of that day again and looks at its settlement_unexplained
 * discrepancies (reconcile/rules/settlement.ts). Only the dates of those without a key: the others'
 * keys bring their rows, and their days, into the run's scope already.
 *
 * [pipeline only] recon_work.note_discrepancy_action() is the trigger function of public.discrepancies
 * (security definer, as in 0027); no analyst role calls it.
 */

const ACTED = `(select n.* from new_rows n join old_rows o using (discrepancy_id)
  where (n.resolved_at, n.resolution) is distinct from (o.resolved_at, o.resolution)) acted`;

const KEYS = ['transaction_id', 'merchant_transaction_id', 'return_transaction_id'] as const;

function keysOf(column: string): string {
  return `(select array_agg(k) from (select ${column}::text as k from ${ACTED}) x where k is not null)`;
}

/** 0027's insert of the acted discrepancies' keys, and with `dates` the dates of those without one. */
function insertKeys(dates: boolean): string {
  const arrays = KEYS.map(keysOf).join(', ');
  if (!dates)
    return `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids)
    select * from (select ${arrays}) a (t, m, r)
    where t is not null or m is not null or r is not null`;
  const keyless = KEYS.map((k) => `acted.${k} is null`).join(' and ');
  const days = `(select array_agg(distinct acted.business_date) from ${ACTED}
    where ${keyless} and acted.business_date is not null)`;
  return `insert into recon_work.changed_keys (transaction_ids, merchant_transaction_ids, return_transaction_ids, business_dates)
    select * from (select ${arrays}, ${days}) a (t, m, r, d)
    where t is not null or m is not null or r is not null or d is not null`;
}

async function replaceFunction(db: Kysely<any>, dates: boolean): Promise<void> {
  // A person's resolution or reopening; a reconcile run's own updates name its account and are left out.
  await sql
    .raw(
      `create or replace function recon_work.note_discrepancy_action() returns trigger language plpgsql security definer
        set search_path = pg_catalog, recon_work as $$
      begin
        if coalesce(current_setting('recon.run_account', true), '') <> '' then return null; end if;
        ${insertKeys(dates)};
        return null;
      end $$`,
    )
    .execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await replaceFunction(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await replaceFunction(db, false);
}
