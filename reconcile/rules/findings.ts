import { type RawBuilder, sql } from 'kysely';
import { type Sql, toSql } from './sql-terms.ts';

/**
 * The columns of the run's `findings` table, in one list: the table is created from it and every
 * rule's insert names its columns from it (reconcile/apply-findings.ts reads them by name).
 */
const FINDING_COLUMNS = {
  discrepancy_key: 'text primary key',
  kind: 'text not null',
  rule: 'text not null',
  transaction_id: 'text',
  merchant_transaction_id: 'text',
  return_transaction_id: 'text',
  business_date: 'date not null',
  currency: 'char(3)',
  expected: 'jsonb',
  actual: 'jsonb',
  expected_amount_cents: 'bigint',
  actual_amount_cents: 'bigint',
  difference_cents: 'bigint',
  candidates: 'jsonb',
} as const;

export type FindingColumn = keyof typeof FINDING_COLUMNS;
type RequiredColumn = {
  [K in FindingColumn]: (typeof FINDING_COLUMNS)[K] extends `${string}${'not null' | 'primary key'}`
    ? K
    : never;
}[FindingColumn];

/**
 * A finding as SQL expressions over the rows a rule reads: the columns that may not be null are
 * required, the others are null when left out. `kind` and `rule` may come from the rule itself.
 */
export type FindingSelect = { readonly [K in RequiredColumn]: Sql } & {
  readonly [K in Exclude<FindingColumn, RequiredColumn>]?: Sql;
};

/** The columns of `findings`, in the table's order. */
export const FINDING_COLUMN_NAMES = Object.keys(FINDING_COLUMNS) as FindingColumn[];

export function createFindingsTable(): RawBuilder<unknown> {
  const columns = FINDING_COLUMN_NAMES.map((c) => `${c} ${FINDING_COLUMNS[c]}`).join(', ');
  return sql`create temp table findings (${sql.raw(columns)}) on commit drop`;
}

/**
 * `insert into findings (<the columns given>) select <their expressions> from <from> where <where>`.
 * A key already found by an earlier rule of the run is kept (one finding per discrepancy key).
 */
export function insertFindings(select: FindingSelect, from: Sql, where: Sql): RawBuilder<unknown> {
  const columns = FINDING_COLUMN_NAMES.filter((c) => select[c] !== undefined);
  return sql`insert into findings (${sql.raw(columns.join(', '))})
    select ${sql.join(columns.map((c) => toSql(select[c]!)))}
    from ${toSql(from)} where ${toSql(where)}
    on conflict do nothing`;
}
