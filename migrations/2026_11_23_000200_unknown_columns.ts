import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code.
//
// The provider's formats do not all carry the same fields: the JSON report has no device or request
// type, the CSV report no original transaction type or original external reference, legacy type 5 no
// return code, and a legacy `response_fields` selection leaves out what it does not list. A column
// that a load's format does not carry is unknown, not null: the load keeps its stored value and does
// not compare it. `unknown_columns` says which columns of a row no load has carried yet, so that a
// later format that does carry them fills them in without that counting as a restatement.

const TABLES = ['provider_transactions', 'provider_returns', 'legacy_transactions'] as const;

const COMMENT =
  'Columns of this row that no load has carried yet (their format does not have the field): null there means unknown, not empty. A load whose format carries such a column fills it in without that counting as a restatement. Null when every column is known.';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} add column unknown_columns text[]`.execute(db);
    await sql`comment on column ${sql.raw(`${table}.unknown_columns`)} is ${sql.lit(COMMENT)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} drop column unknown_columns`.execute(db);
  }
}
