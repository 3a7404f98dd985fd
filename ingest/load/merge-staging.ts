/**
 * Set-based merge of one staging table into its warehouse table: deduplicate the staged rows (last
 * occurrence in the file wins), write the earlier version of every row that changes into row_history,
 * update the changed rows and insert the new ones. Rows whose compared columns are all equal are left
 * untouched (their load_id and updated_at stay), which makes re-loading a file a no-op on the warehouse.
 *
 * All parts of the statement see the same snapshot, so row_history receives the rows exactly as they
 * were before this load.
 */

import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { queryOn } from '../../db/database-on-client.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import { attnumsOf, lockStatement } from './load-statements.ts';
import { howToFind } from './how-to-find.ts';
import { textLiteral } from './noted-keys.ts';
import { carriedColumns, maskBits, TARGETS, type Target } from './targets.ts';
import { LEGACY_AS_PROVIDER, LEGACY_PROJECTION_REQUIRES } from './legacy-projection.ts';
import { refusedHistoryCte, TIME_ORDER_GUARD } from './time-order.ts';

export interface MergeResult {
  inserted: number;
  updated: number;
  /** Whether every staged key was known to be new (`allNew`), so that nothing was probed. */
  allNew?: boolean;
}

interface MergeSpec {
  readonly target: Target;
  /**
   * SELECT yielding one row per key: `seq` (unique) and the target's record columns (and `source` when
   * it has one). Referenced three times and recomputed each time unless `materialize`: a scan of
   * staging, not a sort.
   */
  readonly src: string;
  readonly materialize?: boolean;
  readonly source: string | null;
  /** Extra condition on the existing row `t` for it to be replaced (source precedence). */
  readonly guard?: string;
  /** A final status never goes back to PENDING: such changes are refused and kept (time-order.ts). */
  readonly timeOrder?: boolean;
  /**
   * The target's columns that the load's format carries ({@link carriedColumns}); the others are
   * unknown. Undefined: every column.
   */
  readonly carried?: readonly string[];
  /** attnum of the target's columns: the bits of unknown_mask (read by {@link run}). */
  readonly attnums?: ReadonlyMap<string, number>;
  /**
   * The staging table whose key column bounds `src`'s keys from below. When its least key sorts after
   * every key of the target (a first load, or the next batch of a file in key order), no staged row
   * can exist in the target: {@link run} then sets `allNew` and the merge probes nothing.
   */
  readonly keysFrom?: { readonly staging: string; readonly account: string };
  readonly allNew?: boolean;
  /**
   * Find stored rows by one index probe per staged row instead of a join over the table: set by
   * {@link run} when the table is much larger than `keysFrom` (a batch of a long file, a day's rows
   * into years of them), where a hash join would read the whole table for a few rows.
   */
  readonly probe?: boolean;
}

/** The key condition between a stored row and a staged one: the provider's id within one account. */
const sameKey = (t: Target, left: string, right: string) =>
  `${left}.account = ${right}.account and ${left}.${t.key} = ${right}.${t.key}`;

/**
 * The merge statement. Rows are matched to staging rows by `seq`, never sorted: a sort of the wide
 * staged rows, like a materialised copy of them, spills hundreds of megabytes to disk on a large
 * load. Only narrow things are kept: `touched`, the seq of every new or changed row and whether it is
 * new (a re-load finds none, and then every later join ends at once).
 *
 * New keys (most rows of a first load) are written by a plain INSERT, not by INSERT ... ON CONFLICT:
 * speculative insertion costs an extra index probe and WAL record per row. They arrive in file order,
 * which for the provider's reports is key order. Only existing keys whose compared columns differ go
 * through UPDATE and row_history. A plain INSERT is safe because {@link lockStatement} runs first in
 * the same transaction: no other load can insert a key of this table between the statement's snapshot
 * and its insert.
 */
export function mergeStatement(spec: MergeSpec, loadId: number, projection?: MergeSpec): string {
  const parts = [mergeCtes(spec, loadId, '')];
  if (projection) parts.push(mergeCtes(projection, loadId, 'p_'));
  return `with ${parts.join(',\n')}
select (select count(*) from ins)::bigint as inserted,
       (select count(*) from upd where restated)::bigint as updated,
       (select count(*) from hist)::bigint as history`;
}

/**
 * The CTEs merging `spec.src` into its table, named with `prefix`: ${prefix}src, ${prefix}touched (seq
 * of new and changed rows), ${prefix}changed, ${prefix}hist, ${prefix}upd, ${prefix}ins. A second merge
 * in the same statement (the legacy projection) can read the first one's `src` and `touched`.
 * Data-modifying CTEs always run to completion, and all see the snapshot taken before any of them.
 */
function mergeCtes(spec: MergeSpec, loadId: number, prefix: string): string {
  const { target: t, src, source, guard } = spec;
  const tracks = t.tracksUnknown;
  // A table without unknown_mask cannot keep a column unknown: its loads carry every column.
  const carried = new Set(tracks && spec.carried ? spec.carried : t.columns);
  // Columns the load's format does not carry: unknown, so never compared nor updated, and null (with
  // their bits set in unknown_mask) in a new row.
  const unknown = t.columns.filter((c) => !carried.has(c));
  const comparedCarried = t.compared.filter((c) => carried.has(c));
  const compared = source === null ? comparedCarried : [...comparedCarried, 'source'];
  const written = t.columns.filter((c) => carried.has(c));
  // `account` is part of the key: always written, from the record or from the load.
  const keyed = written.includes('account') ? written : [...written, 'account'];
  const insertCols = source === null ? keyed : [...keyed, 'source'];
  const distinct = (left: string, right: string) =>
    `(${compared.map((c) => `${left}.${c}`).join(', ')}) is distinct from (${compared.map((c) => `${right}.${c}`).join(', ')})`;
  const mask = (columns: readonly string[]) => maskOf(t, spec.attnums, columns);
  // A column still unknown in the stored row is filled in, not restated: it is left out of
  // changed_columns, and a row whose only differences are such columns is no restatement.
  const stillKnown = (c: string) =>
    tracks && c !== 'source' ? ` and coalesce(t.unknown_mask & ${mask([c])}, 0) = 0` : '';
  // A row taken over from another source (a report row replacing a legacy one, by precedence) is
  // replaced whole: what the new source does not carry becomes unknown instead of keeping the other
  // source's value. The warehouse then ends the same whichever source was loaded first.
  const takeover = tracks && source !== null && unknown.length > 0;
  const sameSource = 't.source = s.source';
  const changed = `array_remove(array[${[
    ...compared.map((c) => `case when t.${c} is distinct from s.${c}${stillKnown(c)} then '${c}' end`),
    ...(takeover
      ? unknown.map((c) => `case when not ${sameSource} and t.${c} is not null then '${c}' end`)
      : []),
  ].join(', ')}]::text[], null)`;
  // Integer arithmetic on a column that is null for most rows: the cost of the rule on a re-load.
  const fills = tracks ? ` or t.unknown_mask & ${mask(comparedCarried)} <> 0` : '';
  const kept = `nullif(t.unknown_mask & ${mask(unknown)}, 0)`;
  const unknownAfter =
    unknown.length === 0
      ? 'null::bigint'
      : takeover
        ? `case when ${sameSource} then ${kept} else ${mask(unknown)} end`
        : kept;
  const replaced = takeover ? unknown : [];
  const lineage = t.hasFirstLoad ? ['load_id', 'first_load_id'] : ['load_id'];
  const guards = [guard, spec.timeOrder ? TIME_ORDER_GUARD : undefined].filter(Boolean);
  const guardSql = guards.map((g) => ` and ${g}`).join('');
  const [srcCte, touched, changedRows] = [`${prefix}src`, `${prefix}touched`, `${prefix}changed`];
  // OFFSET 0 keeps the subquery from being flattened into a join the planner may hash: each staged
  // row then costs one probe of the key's index, whatever the size of the table.
  const stored = spec.probe
    ? `lateral (select * from ${t.table} t where ${sameKey(t, 't', 's')} offset 0) t on true`
    : `${t.table} t on ${sameKey(t, 't', 's')}`;
  // Unchanged rows are never touched, not even row-locked, which is what makes a re-load cheap.
  // A row whose load_id is this load's was written by an earlier batch of the same file: that state
  // was never committed, so overwriting it is no restatement and leaves no row_history entry.
  return `
${srcCte} as ${spec.materialize ? '' : 'not '}materialized (${src}),
${touched} as materialized (${
    spec.allNew
      ? `select s.seq, true as is_new from ${srcCte} s`
      : `
  select s.seq, t.${t.key} is null as is_new
  from ${srcCte} s left join ${stored}
  where t.${t.key} is null or ((${distinct('t', 's')}${fills})${guardSql})`
  }
),
${changedRows} as materialized (
  select ${insertCols.map((c) => `s.${c}`).join(', ')}${replaced
    .map((c) => `, case when ${sameSource} then t.${c} end as ${c}`)
    .join('')}, to_jsonb(t) as previous, ${changed} as changed_columns, t.load_id = ${loadId} as own${
    tracks ? `, ${unknownAfter} as unknown_mask` : ''
  }
  from ${touched} k join ${srcCte} s on s.seq = k.seq join ${stored}
  where ${spec.allNew ? 'false' : 'not k.is_new'}
),
${prefix}hist as (
  insert into row_history (table_name, row_key, previous, changed_columns, load_id, account)
  select ${textLiteral(t.table)}, d.${t.key}::text, d.previous, d.changed_columns, ${loadId}, d.account
  from ${changedRows} d where not d.own${tracks ? ` and d.changed_columns <> '{}'` : ''}
  returning 1
),
${
  spec.timeOrder && !spec.allNew
    ? `${refusedHistoryCte({ name: `${prefix}refused`, table: t.table, key: t.key, srcCte, stored, changed, distinct: distinct('t', 's'), loadId })},\n`
    : ''
}${prefix}upd as (
  update ${t.table} as t set
    ${[...insertCols.filter((c) => c !== t.key && c !== 'account'), ...replaced, ...(tracks ? ['unknown_mask'] : [])].map((c) => `${c} = d.${c}`).join(', ')}, load_id = ${loadId}, updated_at = now()
  from ${changedRows} d where ${sameKey(t, 't', 'd')}
  returning ${tracks ? `d.changed_columns <> '{}' and ` : ''}not d.own as restated
),
${prefix}ins as (
  insert into ${t.table} (${[...insertCols, ...lineage, ...(tracks ? ['unknown_mask'] : [])].join(', ')})
  select ${insertCols.map((c) => `s.${c}`).join(', ')}, ${lineage.map(() => String(loadId)).join(', ')}${
    tracks ? `, ${unknown.length === 0 ? 'null::bigint' : mask(unknown)}` : ''
  }
  from ${touched} k join ${srcCte} s on s.seq = k.seq
  where k.is_new
  returning 1
)`;
}

/**
 * The unknown_mask bits of `columns` as a bigint literal: bit n for the column whose attnum is n
 * (migration 0001_warehouse_tables). attnum never changes for a column, so stored masks keep their meaning.
 */
function maskOf(t: Target, attnums: ReadonlyMap<string, number> | undefined, columns: readonly string[]) {
  return `${maskBits(t, attnums, columns)}::bigint`;
}

async function run(db: Db, merge: MergeSpec, loadId: number, second?: MergeSpec): Promise<MergeResult> {
  await sql`${sql.raw(lockStatement(merge.target))}`.execute(db);
  if (second) await sql`${sql.raw(lockStatement(second.target))}`.execute(db);
  const withBits = async (s: MergeSpec): Promise<MergeSpec> => ({
    ...s,
    ...(s.target.tracksUnknown ? { attnums: await attnumsOf(queryOn(db), s.target.table) } : {}),
    ...(s.keysFrom === undefined
      ? {}
      : await howToFind(db, s.target, s.keysFrom.staging, s.keysFrom.account)),
  });
  const spec = await withBits(merge);
  const projection = second && (await withBits(second));
  const statement = mergeStatement(spec, loadId, projection);
  // EXPLAIN ANALYZE runs the merge: in a savepoint rolled back before the real run.
  if (PROFILE === 'explain') {
    await sql`savepoint explain_merge`.execute(db);
    const plan = await sql<{
      'QUERY PLAN': string;
    }>`${sql.raw(`explain (analyze, buffers) ${statement}`)}`.execute(db);
    await sql`rollback to savepoint explain_merge`.execute(db);
    process.stderr.write(`${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
  const t0 = performance.now();
  const result = await sql<{ inserted: number; updated: number }>`${sql.raw(statement)}`.execute(db);
  if (PROFILE) {
    writeProfileLine(
      t0,
      `merge into ${spec.target.table}${projection ? ` and ${projection.target.table}` : ''}`,
    );
  }
  const row = result.rows[0]!;
  return {
    inserted: row.inserted,
    updated: row.updated,
    allNew: spec.allNew === true && (projection === undefined || projection.allNew === true),
  };
}

const cols = (t: Target, alias = '') => t.columns.map((c) => `${alias}${c}`).join(', ');

/**
 * The staged rows: one per key, as {@link StagingTables} keeps only the last occurrence of each. Rows
 * of a target whose records do not name their account take the load's.
 */
function staged(t: Target, staging: string, source: string | null, account: string): string {
  const sourceCol = source === null ? '' : `, ${textLiteral(source)}::text as source`;
  const accountCol = t.accountPerRow ? '' : `, ${textLiteral(account)}::text as account`;
  return `select seq, ${cols(t)}${sourceCol}${accountCol} from ${staging}`;
}

/** Report API rows always replace; legacy rows never replace a row that came from the report API. */
const LEGACY_GUARD = `t.source not like 'report-%'`;

/** What a merge of staged report rows takes: where they are staged, for which load, account and source. */
type MergeArgs = [
  db: Db,
  staging: string,
  loadId: number,
  account: string,
  source: string,
  carried?: readonly string[],
];

/** Transactions and returns merge alike: the report API replaces, legacy rows never replace report rows. */
function mergeGuarded(t: Target, ...[db, staging, loadId, account, source, carried]: MergeArgs) {
  return run(
    db,
    {
      target: t,
      src: staged(t, staging, source, account),
      source,
      guard: source.startsWith('legacy-') ? LEGACY_GUARD : undefined,
      timeOrder: t === TARGETS.transaction,
      carried: carriedColumns(t, carried),
      keysFrom: { staging, account },
    },
    loadId,
  );
}

export function mergeTransactions(...args: MergeArgs) {
  return mergeGuarded(TARGETS.transaction, ...args);
}

export function mergeReturns(...args: MergeArgs) {
  return mergeGuarded(TARGETS.return, ...args);
}

/**
 * Merges legacy transactions into legacy_transactions and, in the same statement, projects them into
 * provider_transactions where no report API row exists. Only the legacy rows this load inserts or
 * changes (the legacy merge's `touched`) are projected: a provider row of source legacy-transactions is
 * written by this projection alone, so an unchanged legacy row has an unchanged projection, and a
 * re-load does no second pass over the file. A row whose response_fields left out amount, currency or
 * status cannot stand as a provider transaction (those columns are required there); it stays in
 * legacy_transactions only. The counts are legacy_transactions': the projection is a second view of
 * the same records.
 */
export function mergeLegacyTransactions(
  db: Db,
  staging: string,
  loadId: number,
  account: string,
  carried?: readonly string[],
) {
  const l = TARGETS['legacy-transaction'];
  const t = TARGETS.transaction;
  const legacyCarried = carriedColumns(l, carried);
  const known = new Set(legacyCarried);
  const select = t.columns
    .map((c) => {
      const from = LEGACY_AS_PROVIDER[c];
      return from ? `s.${from} as ${c}` : `null::${t.stagingTypes[c]} as ${c}`;
    })
    .join(', ');
  // A provider row needs amount, currency and status. Left out by the load's --fields, they are
  // unknown, not null: the projection can then only update a provider row that has them already.
  const required = LEGACY_PROJECTION_REQUIRES;
  const present = required.filter((c) => known.has(c)).map((c) => `s.${c} is not null`);
  if (present.length < required.length) {
    present.push(
      `exists (select 1 from ${t.table} p where p.account = s.account and p.${t.key} = s.transaction_id)`,
    );
  }
  const projection = `select s.seq, ${select}, 'legacy-transactions'::text as source, s.account
  from touched k join src s on s.seq = k.seq
  where ${present.join(' and ')}`;
  const src = staged(l, staging, null, account);
  return run(
    db,
    { target: l, src, source: null, carried: legacyCarried, keysFrom: { staging, account } },
    loadId,
    {
      target: t,
      keysFrom: { staging, account },
      src: projection,
      source: 'legacy-transactions',
      guard: LEGACY_GUARD,
      // What legacy rows say of a provider transaction: the mapped columns whose legacy field the
      // load carries. Legacy rows never carry the others (product, device type, ...).
      carried: t.columns.filter(
        (c) => LEGACY_AS_PROVIDER[c] !== undefined && known.has(LEGACY_AS_PROVIDER[c]),
      ),
    },
  );
}

/**
 * Adjustments have no provider key: the parser's key (a hash of the normalised fields) is completed
 * with the occurrence number among identical rows of this load, so two identical adjustments in one
 * report stay two rows and re-loading the report finds the same keys.
 */
export function mergeAdjustments(db: Db, staging: string, loadId: number, account: string) {
  const t = TARGETS.adjustment;
  const others = t.columns.filter((c) => c !== 'adjustment_key').join(', ');
  const src = `select seq, adjustment_key || '#' || row_number() over (partition by adjustment_key order by seq) as adjustment_key,
    ${others}, 'legacy-adjustments'::text as source, ${textLiteral(account)}::text as account from ${staging}`;
  return run(db, { target: t, src, materialize: true, source: 'legacy-adjustments' }, loadId);
}

export function mergeLedger(
  db: Db,
  staging: string,
  loadId: number,
  account: string,
  carried?: readonly string[],
) {
  const t = TARGETS.ledger;
  return run(
    db,
    {
      target: t,
      src: staged(t, staging, null, account),
      source: null,
      carried: carriedColumns(t, carried),
      keysFrom: { staging, account },
    },
    loadId,
  );
}
