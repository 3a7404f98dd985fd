import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * 0016 added provider_returns.report_date, settlement_date and last_updated_on empty: a return
 * stored before it held a known null in each, so that re-loading the report that stored it restated
 * the return (the date went from null to its value) and its other formats' dates could never be
 * filled in without a restatement. For those returns (the three dates null while returned_on is
 * not, or none of their unknown_mask bits set: no load since 0016 touched them, as every such load
 * stores its format's date, returned_on, and marks the two others unknown), this does what such a
 * load does: the date of the format that last loaded the return becomes returned_on (JSON
 * reportDate, CSV Settlement Date, legacy field 1) and the two other dates are marked unknown.
 */
const BIT = (column: string) =>
  sql`(1::bigint << (select attnum from pg_attribute
    where attrelid = 'provider_returns'::regclass and attname = ${column}))`;
const ALL = sql`(${BIT('report_date')} | ${BIT('settlement_date')} | ${BIT('last_updated_on')})`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`update provider_returns r
    set report_date = case when f.format = 'report-json' then r.returned_on end,
      settlement_date = case when f.format = 'report-csv' then r.returned_on end,
      last_updated_on = case when f.format = 'legacy' then r.returned_on end,
      unknown_mask = coalesce(r.unknown_mask, 0) & ~${ALL}
        | case when f.format = 'report-json' then 0 else ${BIT('report_date')} end
        | case when f.format = 'report-csv' then 0 else ${BIT('settlement_date')} end
        | case when f.format = 'legacy' then 0 else ${BIT('last_updated_on')} end
    from loads f
    where f.load_id = r.load_id
      and r.report_date is null and r.settlement_date is null and r.last_updated_on is null
      and (r.returned_on is not null or coalesce(r.unknown_mask, 0) & ${ALL} = 0)`.execute(db);
}

export async function down(): Promise<void> {
  // The dates and bits set here are what loads since 0016 store too: nothing to undo.
}
