import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
//
// The bulk tables' lineage columns (load_id, first_load_id) referenced loads through foreign keys,
// which PostgreSQL checks with one trigger and one index probe of loads per written row: measured as
// about 30 % of the merge of a 1,000,000-row load (EXPLAIN ANALYZE: "Trigger for constraint
// ..._load_id_fkey" calls = rows). Lineage stays sound without them:
//   - the loader writes only the id of its own load, whose loads row it committed before staging
//     (so the id always exists when the merge runs);
//   - loads rows are permanent: deleting or truncating loads, or changing a load_id, is refused by
//     the statement-level triggers below (one check per statement, not per row);
//   - test/integration/load-lineage.test.ts asserts that every lineage id points to a loads row.
// rejected_rows and row_history keep their foreign keys: they are written for a few rows per load.

const LINEAGE_KEYS: [string, string][] = [
  ['provider_transactions', 'provider_transactions_load_id_fkey'],
  ['provider_transactions', 'provider_transactions_first_load_id_fkey'],
  ['legacy_transactions', 'legacy_transactions_load_id_fkey'],
  ['legacy_transactions', 'legacy_transactions_first_load_id_fkey'],
  ['provider_returns', 'provider_returns_load_id_fkey'],
  ['provider_returns', 'provider_returns_first_load_id_fkey'],
  ['provider_adjustments', 'provider_adjustments_load_id_fkey'],
  ['provider_adjustments', 'provider_adjustments_first_load_id_fkey'],
  ['merchant_ledger', 'merchant_ledger_load_id_fkey'],
];

const LINEAGE_COMMENT =
  '(loads.load_id). Not a foreign key (its per-row check cost 30 % of a bulk merge): loads rows are permanent (trigger loads_are_permanent), so the id always resolves.';

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, constraint] of LINEAGE_KEYS) {
    await sql.raw(`alter table ${table} drop constraint if exists ${constraint}`).execute(db);
  }
  await sql
    .raw(
      `create function loads_are_permanent() returns trigger language plpgsql as $$
begin
  raise exception 'loads rows are permanent: % on loads refused (warehouse rows point to them by load_id)', tg_op
    using errcode = 'restrict_violation',
          hint = 'to undo a load, load the corrected file again; lineage must keep resolving';
end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on function loads_are_permanent() is 'Refuses DELETE, TRUNCATE and load_id changes on loads, so that the lineage columns of the warehouse tables (no foreign keys) always resolve.'`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger loads_are_permanent before delete or truncate or update of load_id on loads
         for each statement execute function loads_are_permanent()`,
    )
    .execute(db);
  await sql
    .raw(
      `comment on trigger loads_are_permanent on loads is 'Statement-level guard: loads rows are never deleted nor renumbered (lineage of every warehouse row points to them).'`,
    )
    .execute(db);
  for (const [table, constraint] of LINEAGE_KEYS) {
    const column = constraint.slice(table.length + 1, -'_fkey'.length);
    await sql
      .raw(
        `comment on column ${table}.${column} is '${column === 'first_load_id' ? 'Load that first brought this row ' : 'Load that last changed this row '}${LINEAGE_COMMENT}${table === 'merchant_ledger' ? ' Null for direct writes.' : ''}'`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop trigger if exists loads_are_permanent on loads`).execute(db);
  await sql.raw(`drop function if exists loads_are_permanent()`).execute(db);
  for (const [table, constraint] of LINEAGE_KEYS) {
    const column = constraint.slice(table.length + 1, -'_fkey'.length);
    await sql
      .raw(
        `alter table ${table} add constraint ${constraint} foreign key (${column}) references loads (load_id)`,
      )
      .execute(db);
  }
}
