import { type RawBuilder, sql } from 'kysely';
import type { RuleContext } from './statement.ts';

/**
 * How a statement of a run over changed keys finds the rows of a table that carry some keys
 * (reconcile/rules/changed-scope.ts): the statement is the same either way, only the way to its
 * rows differs, chosen per statement from the number of keys and the rows the other way reads.
 *
 * - A descent of the key's index per key (a lateral probe): its cost follows the number of keys.
 * - A hash join of the keys with the rows the statement reads without them (the range's, or the
 *   whole table's when the statement has no range): its cost follows those rows.
 *
 * Not `= any (array(...))`: over sorted keys, PostgreSQL walks the index between them instead of
 * descending once they are close together, comparing every entry it passes with the array: 10,000
 * keys spread over a 1,000,000-row index took 3.5 s, against 0.4 s for the hash join and 0.08 s for
 * the join with a 30-day range's rows (docs/benchmark-record.md §1, the nightly's reconcile against
 * the history's size).
 */

/**
 * One index descent costs about as many rows of a hash join: at 100,000 rows, 60,000 keys took 2.56 s
 * in lateral probes and 0.19 s joined by hash with the whole table, 1,000 keys 41 ms and 39 ms.
 */
export const PROBE_ROWS = 30;

/** Whether `keys` keys are better found one descent each than by hashing `rows` rows. */
export function probeEach(keys: number, rows: number): boolean {
  return keys * PROBE_ROWS < rows;
}

/**
 * The rows of `table` (all columns) whose `column` is among `keys` (a one-column query) and that
 * meet `within` (a condition on the table's row, `x`: the statement's range), as a from-item:
 * probed one distinct key at a time (`probe`), or joined with the keys by hash. The same rows either
 * way, computed once (materialized): a from-item the planner puts inside a nested loop is not read
 * again for every outer row (300 returns, each probing 1,199 keys again, took 5.7 s).
 */
export function rowsWithKeys(
  table: string,
  column: string,
  keys: RawBuilder<unknown>,
  probe: boolean,
  within: RawBuilder<unknown> = sql`true`,
): RawBuilder<unknown> {
  const rows = probe
    ? sql`select x.* from (select distinct key from (${keys}) k0(key)) k
        cross join lateral (select * from ${sql.table(table)} x where x.${sql.ref(column)} = k.key and ${within} offset 0) x`
    : sql`select * from ${sql.table(table)} x where x.${sql.ref(column)} in (${keys}) and ${within}`;
  return sql`(with keyed as materialized (${rows}) select * from keyed)`;
}

/** The number of rows of a run's temporary table (the changed keys, a scope being built). */
export async function rowCount(ctx: Pick<RuleContext, 'trx'>, table: string): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(ctx.trx);
  return r.rows[0]!.n;
}

/** The planner's estimate of the rows `query` returns (read from its plan; nothing is executed). */
export async function estimatedRows(
  ctx: Pick<RuleContext, 'trx'>,
  query: RawBuilder<unknown>,
): Promise<number> {
  const r = await sql<{
    'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }];
  }>`explain (format json) ${query}`.execute(ctx.trx);
  return r.rows[0]!['QUERY PLAN'][0].Plan['Plan Rows'];
}
