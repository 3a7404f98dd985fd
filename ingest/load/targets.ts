/**
 * Where each kind of normalised record goes: its warehouse table, natural key and the columns a record
 * carries (all table columns minus lineage and generated ones). Derived from the column specs of
 * db/, so a column added by a migration and its spec flows through the loader without edits here.
 */

import { tableColumns, type Database } from '../../db/database.ts';
import type { RecordKind } from '../../domain/sources.ts';

export interface Target {
  readonly kind: RecordKind;
  readonly table: keyof Database;
  /** Natural key: one warehouse row per value, and what the merge matches staged rows on. */
  readonly key: string;
  /** Columns the record carries, in COPY order (includes the key and `raw` when the table has one). */
  readonly columns: readonly string[];
  /** Postgres type of each column in the staging table (char(n) is staged as text). */
  readonly stagingTypes: Readonly<Record<string, string>>;
  /**
   * Columns compared to decide whether a record changes the warehouse row. `raw` is left out: the same
   * transaction reported again in another format (CSV instead of JSON) is not a restatement. So is a
   * legacy row's `query_type` (the same transaction asked for by query type 5 or 6).
   */
  readonly compared: readonly string[];
  /**
   * Whether rows keep `unknown_mask`: the columns no load has carried yet. Only then can a load
   * whose format leaves columns out ({@link carriedColumns}) be merged without nulling them.
   */
  readonly tracksUnknown: boolean;
  readonly hasFirstLoad: boolean;
  /**
   * Whether each record names its account (the ledger: a file can hold several accounts' entries).
   * Otherwise the load's account is every row's. The key is always (`account`, {@link key}): the
   * provider's ids are unique within one account only.
   */
  readonly accountPerRow: boolean;
}

const LINEAGE = new Set([
  'source',
  'load_id',
  'first_load_id',
  'created_at',
  'updated_at',
  'adjustment_id',
  'unknown_mask',
]);
/** Record columns that say how the record was read, not what the provider states about it. */
const NOT_COMPARED = new Set(['raw', 'query_type']);

function target(kind: RecordKind, table: keyof Database, key: string, accountPerRow = false): Target {
  const specs = tableColumns[table] as Record<string, { pg: string }>;
  const columns = Object.keys(specs).filter((c) => !LINEAGE.has(c) && (c !== 'account' || accountPerRow));
  const stagingTypes: Record<string, string> = {};
  for (const c of columns) {
    const pg = specs[c]!.pg;
    stagingTypes[c] = pg === 'character' ? 'text' : pg;
  }
  return {
    kind,
    table,
    key,
    columns,
    stagingTypes,
    compared: columns.filter((c) => c !== key && c !== 'account' && !NOT_COMPARED.has(c)),
    tracksUnknown: 'unknown_mask' in specs,
    hasFirstLoad: 'first_load_id' in specs,
    accountPerRow,
  };
}

export const TARGETS: Readonly<Record<RecordKind, Target>> = {
  transaction: target('transaction', 'provider_transactions', 'transaction_id'),
  'legacy-transaction': target('legacy-transaction', 'legacy_transactions', 'transaction_id'),
  return: target('return', 'provider_returns', 'return_transaction_id'),
  adjustment: target('adjustment', 'provider_adjustments', 'adjustment_key'),
  ledger: target('ledger', 'merchant_ledger', 'merchant_transaction_id', true),
};

/**
 * The columns of a target that a load carries: `carried` as the parser reported it for the load's
 * format (field list, CSV header), restricted to the target's columns, with the key, `raw` and
 * `query_type` always carried. Undefined (a parser that reports nothing) means every column. A table
 * that does not track unknown columns takes every column: its loads have one format.
 */
export function carriedColumns(t: Target, carried: readonly string[] | undefined): readonly string[] {
  if (carried === undefined || !t.tracksUnknown) return t.columns;
  const set = new Set(carried);
  return t.columns.filter((c) => c === t.key || c === 'account' || NOT_COMPARED.has(c) || set.has(c));
}

/**
 * The unknown_mask bits of `columns`: bit n for the column whose attnum is n (migration
 * 0001_warehouse_tables; attnums from load-statements.ts attnumsOf).
 */
export function maskBits(
  t: Target,
  attnums: ReadonlyMap<string, number> | undefined,
  columns: readonly string[],
) {
  let mask = 0n;
  for (const c of columns) {
    const n = attnums?.get(c);
    if (n === undefined || n < 1 || n > 62) {
      throw new Error(
        `${t.table}.${c} has no unknown_mask bit (attnum ${n ?? 'unknown'}; bits 1-62 exist): a column added past attnum 62 needs a wider mask`,
      );
    }
    mask |= 1n << BigInt(n);
  }
  return mask;
}
