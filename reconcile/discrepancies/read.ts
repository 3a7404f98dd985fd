/**
 * Reading discrepancies: lists in one of the orders, the workbench's keyed pages (a deep page costs
 * what the first one does: index range scan from the cursor, no OFFSET), and totals by account, kind,
 * currency and day. Every read takes a {@link DiscrepancyFilter}, and with it its account scope.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import { filterCondition, type DiscrepancyFilter, type StatusFilter } from './filter.ts';
import { afterCursor, beforeCursor, encodeCursor, ORDER_BY, type DiscrepancyOrder } from './order.ts';
import { ROW_COLUMNS, type DiscrepancyRow } from './row.ts';

export interface ReadOptions {
  readonly order: DiscrepancyOrder;
  /** At most this many rows. */
  readonly limit?: number;
  /** Continue after this cursor (worklist order only; see order.ts). */
  readonly cursor?: string;
  /** Only rows before this cursor (worklist orders only), for the page before it. */
  readonly before?: string;
}

/**
 * The discrepancies of the filter, in the given order. In the worklist orders, a filter of every
 * status reads the unresolved and the resolved ones apart, each from its own index in that order
 * (discrepancies_worklist_idx and discrepancies_worklist_resolved_idx, migration 0054), and merges
 * the two: each discrepancy is in one of them, and no index holds every row (a run's new
 * discrepancies, all unresolved, are written into one worklist index fewer).
 */
export async function listDiscrepancies(
  db: Db,
  filter: DiscrepancyFilter,
  options: ReadOptions,
): Promise<DiscrepancyRow[]> {
  const after = options.cursor
    ? sql`and ${afterCursor(options.cursor)}`
    : options.before
      ? sql`and ${beforeCursor(options.before)}`
      : sql``;
  const limit = options.limit !== undefined ? sql`limit ${options.limit}` : sql``;
  const order = ORDER_BY[options.order];
  const select = (resolved: RawBuilder<unknown>) => sql`select ${ROW_COLUMNS} from discrepancies
    where ${filterCondition(filter)} ${resolved} ${after}
    order by ${order} ${limit}`;
  const everyStatus = (filter.status ?? 'all') === 'all';
  const query =
    everyStatus && (options.order === 'worklist' || options.order === 'worklist_backwards')
      ? sql<DiscrepancyRow>`select * from ((${select(sql`and resolved_at is null`)})
          union all (${select(sql`and resolved_at is not null`)})) d
        order by ${order} ${limit}`
      : sql<DiscrepancyRow>`${select(sql``)}`;
  return (await query.execute(db)).rows;
}

/**
 * One page of the worklist (worklist order) with the cursor of the next page (null at the end) and
 * of the previous one (null on the first). Given `before` instead of `cursor`, the page is the
 * `limit` rows just before that cursor, read backwards on the same index.
 */
export async function worklistPage(
  db: Db,
  filter: DiscrepancyFilter,
  page: { limit: number; cursor?: string; before?: string },
): Promise<{ items: DiscrepancyRow[]; next_cursor: string | null; prev_cursor: string | null }> {
  const backwards = page.before !== undefined && page.cursor === undefined;
  const rows = await listDiscrepancies(db, filter, {
    order: backwards ? 'worklist_backwards' : 'worklist',
    limit: page.limit + 1,
    ...(page.cursor ? { cursor: page.cursor } : backwards ? { before: page.before } : {}),
  });
  const more = rows.length > page.limit;
  const items = rows.slice(0, page.limit);
  if (backwards) items.reverse();
  const first = items[0];
  const last = items.at(-1);
  const hasBefore = backwards ? more : page.cursor !== undefined;
  const hasAfter = backwards || more;
  return {
    items,
    next_cursor: hasAfter && last ? encodeCursor(last) : null,
    prev_cursor: hasBefore && first ? encodeCursor(first) : null,
  };
}

/** Every row of the filter, in worklist order, a page at a time (for exports). */
export async function* worklistAll(
  db: Db,
  filter: DiscrepancyFilter,
  pageSize = 5000,
): AsyncGenerator<DiscrepancyRow> {
  let cursor: string | undefined;
  for (;;) {
    const page = await worklistPage(db, filter, { limit: pageSize, ...(cursor ? { cursor } : {}) });
    yield* page.items;
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
  }
}

export interface Total {
  account: string;
  kind: string;
  currency: string | null;
  count: number;
  cents: number;
}

/**
 * Count and money at stake by account, kind and currency, over the whole filter. A filter on status,
 * kind, account, currency and business dates only is summed from discrepancy_totals (a few rows per
 * day and kind, whatever the number of discrepancies); one with an assignee, a minimum or a search
 * reads the matching discrepancies.
 */
export async function worklistTotals(db: Db, filter: DiscrepancyFilter): Promise<Total[]> {
  if (filter.assignee !== undefined || filter.minCents !== undefined || filter.q !== undefined)
    return liveTotals(db, filter);
  const parts: RawBuilder<unknown>[] = [];
  const statuses: Record<StatusFilter, string[] | null> = {
    unresolved: ['open', 'acknowledged'],
    open: ['open'],
    acknowledged: ['acknowledged'],
    resolved: ['resolved'],
    all: null,
  };
  const status = statuses[filter.status ?? 'all'];
  if (status) parts.push(sql`status = any(${status}::text[])`);
  if (filter.kinds?.length) parts.push(sql`kind = any(${filter.kinds}::text[])`);
  if (filter.account) parts.push(sql`account = ${filter.account}`);
  if (filter.accounts !== undefined && filter.accounts !== 'all')
    parts.push(sql`account = any(${[...filter.accounts]}::text[])`);
  if (filter.currency) parts.push(sql`currency = ${filter.currency}::bpchar`);
  // A discrepancy without a business date is kept under 'infinity': outside every date range.
  if (filter.from) parts.push(sql`business_date >= ${filter.from}::date`);
  if (filter.to) parts.push(sql`business_date <= ${filter.to}::date`);
  const rows = await sql<Total>`select account, kind, nullif(currency, '') as currency,
      sum(count)::bigint as count, sum(cents)::bigint as cents
    from discrepancy_totals ${parts.length ? sql`where ${sql.join(parts, sql` and `)}` : sql``}
    group by account, kind, currency having sum(count) <> 0
    order by account, currency = '', currency, cents desc, kind`.execute(db);
  return rows.rows;
}

/** The same totals, counted from the discrepancies themselves. */
export async function liveTotals(db: Db, filter: DiscrepancyFilter): Promise<Total[]> {
  const rows = await sql<Total>`select account, kind, currency, count(*)::bigint as count,
      coalesce(sum(stake_cents), 0)::bigint as cents
    from discrepancies where ${filterCondition(filter)}
    group by account, kind, currency order by account, currency nulls last, currency, cents desc, kind`.execute(
    db,
  );
  return rows.rows;
}

/** How many discrepancies and how much money at stake (cents of `currency`), per group. */
export interface Sum {
  currency: string | null;
  count: number;
  amount_cents: number;
}

/** The report's sums over the filter: per currency, per account, per kind, per day and kind. */
export interface ReportSums {
  readonly totals: Sum[];
  readonly byAccount: (Sum & { account: string })[];
  readonly byKind: (Sum & { kind: string })[];
  readonly byDay: (Sum & { day: string; kind: string })[];
}

/** The sums the report shows (of unresolved discrepancies, when the filter says so). */
export async function reportSums(db: Db, filter: DiscrepancyFilter): Promise<ReportSums> {
  const where = filterCondition(filter);
  const sums = sql`count(*)::int as count, sum(stake_cents)::bigint as amount_cents`;
  const totals = await sql<Sum>`select currency::text as currency, ${sums}
    from discrepancies where ${where} group by 1 order by 1 nulls last`.execute(db);
  const byAccount = await sql<
    ReportSums['byAccount'][number]
  >`select account, currency::text as currency, ${sums}
    from discrepancies where ${where} group by 1, 2 order by 1, 2 nulls last`.execute(db);
  const byKind = await sql<ReportSums['byKind'][number]>`select kind, currency::text as currency, ${sums}
    from discrepancies where ${where}
    group by kind, currency order by sum(count(*)) over (partition by kind) desc, kind, currency nulls last`.execute(
    db,
  );
  const byDay = await sql<ReportSums['byDay'][number]>`select business_date::text as day, kind,
      currency::text as currency, ${sums}
    from discrepancies where ${where} group by 1, 2, 3 order by 1, 2, 3 nulls last`.execute(db);
  return { totals: totals.rows, byAccount: byAccount.rows, byKind: byKind.rows, byDay: byDay.rows };
}
