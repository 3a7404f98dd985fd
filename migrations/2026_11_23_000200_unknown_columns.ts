import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
//
// The provider's formats do not all carry the same fields: the JSON report has no device or request
// type, the CSV report no original transaction type or original external reference, legacy type 5 no
// return code, and a legacy `response_fields` selection leaves out what it does not list (a merchant
// ledger file may leave out its optional columns). A column
// that a load's format does not carry is unknown, not null: the load keeps its stored value and does
// not compare it. `unknown_mask` says which columns of a row no load has carried yet, so that a later
// format that does carry them fills them in without that counting as a restatement.
//
// A bit per column (bit n: the column whose attnum is n) rather than an array of names: nearly every
// row has unknown columns (a JSON report row two, a legacy row five, a legacy projection eight), and
// an array of their names made the tables 35-50 % larger and the merge slower. attnum never changes
// for a column of a table, so the bits keep their meaning; unknown_columns() turns them into names.

const TABLES = [
  'provider_transactions',
  'provider_returns',
  'legacy_transactions',
  'merchant_ledger',
] as const;

const COMMENT =
  'Columns of this row that no load has carried yet (their format does not have the field): null in them means unknown, not empty. Bit n stands for the column whose attnum is n; unknown_column_names(table, unknown_mask) lists their names. A load whose format carries such a column fills it in without that counting as a restatement. Null when every column is known.';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} add column unknown_mask bigint`.execute(db);
    await sql`comment on column ${sql.raw(`${table}.unknown_mask`)} is ${sql.lit(COMMENT)}`.execute(db);
  }
  await sql`create function unknown_column_names(tbl regclass, mask bigint) returns text[]
    language sql stable parallel safe
    return (select array_agg(a.attname::text order by a.attnum) from pg_attribute a
            where a.attrelid = tbl and a.attnum between 1 and 62 and not a.attisdropped
              and mask & (1::bigint << a.attnum) <> 0)`.execute(db);
  await sql`comment on function unknown_column_names(regclass, bigint) is ${sql.lit(
    'Names of the columns of table tbl whose bits are set in mask (an unknown_mask): the columns of that row that no load has carried yet.',
  )}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function unknown_column_names(regclass, bigint)`.execute(db);
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} drop column unknown_mask`.execute(db);
  }
}
