import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * compact_discrepancy_totals(from, to): a reconcile run folds the totals deltas of its own business
 * dates only. The argument-less version (kept, for maintenance) deletes and rewrites every row of
 * discrepancy_totals, which grows with the warehouse's history: at two years it was the largest
 * part of a 3-day run's lifecycle step. Deltas of other dates (a person's action in the workbench
 * on an old discrepancy) stay correct as they are, since a key's total is the sum of its rows, and
 * are folded by the next run over their date.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function compact_discrepancy_totals(from_date date, to_date date) returns void language sql as $$
    with folded as (
      delete from discrepancy_totals where business_date between from_date and to_date returning *)
    insert into discrepancy_totals (business_date, kind, currency, status, count, cents)
    select business_date, kind, currency, status, sum(count), sum(cents) from folded
    group by 1, 2, 3, 4 having sum(count) <> 0 or sum(cents) <> 0 $$`.execute(db);
  await sql`comment on function compact_discrepancy_totals(date, date) is ${sql.lit(
    'Folds the deltas of discrepancy_totals of the business dates from_date..to_date into one row per key; called at the end of every reconcile run for its range.',
  )}`.execute(db);
  // The fold reads the range's rows only (the key index leads with status, kind and currency).
  await sql`create index discrepancy_totals_date_idx on discrepancy_totals (business_date)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index discrepancy_totals_date_idx`.execute(db);
  await sql`drop function compact_discrepancy_totals(date, date)`.execute(db);
}
