import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * A JSON return record has no external reference of its own (docs/provider-interface.md 4.1): the
 * JSON report's loads used to store a known null in provider_returns.external_reference, so that a
 * later CSV report of the same window restated every return (a row_history row each). Loads no longer
 * carry the column from JSON; this marks it unknown (its unknown_mask bit) in the returns whose last
 * load was a JSON report and that hold no reference, so that the next CSV report fills it in without
 * restating them. A reference a CSV report stored and a later JSON load nulled cannot be recovered
 * here: the next CSV report fills it in.
 */
const BIT = sql`(1::bigint << (select attnum from pg_attribute
  where attrelid = 'provider_returns'::regclass and attname = 'external_reference'))`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`update provider_returns r
    set unknown_mask = coalesce(r.unknown_mask, 0) | ${BIT}
    where r.external_reference is null
      and coalesce(r.unknown_mask, 0) & ${BIT} = 0
      and exists (select 1 from loads l where l.load_id = r.load_id and l.format = 'report-json')`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`update provider_returns r
    set unknown_mask = nullif(r.unknown_mask & ~${BIT}, 0)
    where r.external_reference is null
      and r.unknown_mask & ${BIT} <> 0
      and exists (select 1 from loads l where l.load_id = r.load_id and l.format = 'report-json')`.execute(
    db,
  );
}
