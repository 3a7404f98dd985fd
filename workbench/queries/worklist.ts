/**
 * The worklist: discrepancies of a filter in the order operations work through them (per currency,
 * money at stake first, then the oldest business date), paged by a cursor on that order so that a
 * deep page costs what the first one does (index range scan from the cursor, no OFFSET), with the
 * totals by account, kind and currency of the whole filter.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import { ReconError } from '../../domain/errors.ts';
import { isValidDate } from '../../domain/time/calendar.ts';

/** An account name as the accounts configuration and the warehouse's check constraint allow it. */
const ACCOUNT_NAME = /^[a-z0-9-]{1,32}$/;

export const STATUSES = ['unresolved', 'open', 'acknowledged', 'resolved', 'all'] as const;
export type StatusFilter = (typeof STATUSES)[number];

export interface WorklistFilter {
  /** unresolved (open or acknowledged, the default), open, acknowledged, resolved, or all. */
  readonly status: StatusFilter;
  readonly kinds: readonly string[];
  /** One provider account (docs/connecting-a-provider.md, "Several accounts"). */
  readonly account?: string;
  readonly currency?: string;
  /** Business dates, inclusive, YYYY-MM-DD. */
  readonly from?: string;
  readonly to?: string;
  /** A user name, or `none` for unassigned. */
  readonly assignee?: string;
  /** Money at stake of at least this many cents. */
  readonly minCents?: number;
  /** An exact transaction id, merchant transaction id or return transaction id, or a discrepancy id. */
  readonly q?: string;
}

/** A query parameter the worklist refuses. */
export class InvalidFilter extends ReconError {
  readonly retryable = false;
}

export interface WorklistItem {
  id: number;
  account: string;
  kind: string;
  rule: string;
  status: string;
  business_date: string | null;
  currency: string | null;
  expected_amount_cents: number | null;
  actual_amount_cents: number | null;
  difference_cents: number | null;
  stake_cents: number;
  transaction_id: string | null;
  merchant_transaction_id: string | null;
  return_transaction_id: string | null;
  assignee: string | null;
  first_seen_at: string;
  acknowledged_by: string | null;
  resolution: string | null;
}

export interface Total {
  account: string;
  kind: string;
  currency: string | null;
  count: number;
  cents: number;
}

/** The filter from query parameters (strings as they come); throws {@link InvalidFilter}. */
export function parseFilter(query: Record<string, unknown>): WorklistFilter {
  const str = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined || v === '' || v === null) return undefined;
    if (typeof v === 'number') return String(v);
    if (typeof v !== 'string') throw new InvalidFilter(`${name} must be given once`);
    return v.trim();
  };
  const status = str('status') ?? 'unresolved';
  if (!(STATUSES as readonly string[]).includes(status))
    throw new InvalidFilter(`status=${status} is not known: use ${STATUSES.join(', ')}`);
  const kinds = (str('kind') ?? '').split(',').filter((k) => k !== '');
  for (const k of kinds)
    if (!/^[a-z_]{1,64}$/.test(k)) throw new InvalidFilter(`kind=${k} is not a discrepancy kind`);
  const account = str('account');
  if (account !== undefined && !ACCOUNT_NAME.test(account))
    throw new InvalidFilter(
      `account=${account.slice(0, 40)} is not an account name: use 1 to 32 of a-z, 0-9 and -`,
    );
  const currency = str('currency')?.toUpperCase();
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency))
    throw new InvalidFilter(`currency=${currency} is not a 3-letter currency code`);
  const from = str('from');
  const to = str('to');
  for (const [n, d] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (d !== undefined && !isValidDate(d))
      throw new InvalidFilter(`${n}=${d} is not a date: use YYYY-MM-DD`);
  if (from && to && from > to) throw new InvalidFilter(`from=${from} is after to=${to}`);
  const min = str('min_cents');
  if (min !== undefined && !/^\d{1,15}$/.test(min))
    throw new InvalidFilter(`min_cents=${min} must be a non-negative whole number of cents`);
  const assignee = str('assignee');
  const q = str('q');
  return {
    status: status as StatusFilter,
    kinds,
    ...(account ? { account } : {}),
    ...(currency ? { currency } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(assignee ? { assignee: assignee.toLowerCase() } : {}),
    ...(min !== undefined ? { minCents: Number(min) } : {}),
    ...(q ? { q: q.slice(0, 200) } : {}),
  };
}

/** The filter as query parameters (for links, the CSV export and next pages). */
export function filterToQuery(f: WorklistFilter): Record<string, string> {
  return {
    ...(f.status !== 'unresolved' ? { status: f.status } : {}),
    ...(f.kinds.length ? { kind: f.kinds.join(',') } : {}),
    ...(f.account ? { account: f.account } : {}),
    ...(f.currency ? { currency: f.currency } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
    ...(f.assignee ? { assignee: f.assignee } : {}),
    ...(f.minCents !== undefined ? { min_cents: String(f.minCents) } : {}),
    ...(f.q ? { q: f.q } : {}),
  };
}

/** The WHERE condition of a filter, stated once for pages, totals, the export and bulk actions. */
export function filterCondition(f: WorklistFilter): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = [];
  // resolved_at is null is spelled out for every unresolved status so the partial index applies.
  if (f.status === 'unresolved') parts.push(sql`resolved_at is null`);
  else if (f.status === 'open') parts.push(sql`resolved_at is null and status = 'open'`);
  else if (f.status === 'acknowledged') parts.push(sql`resolved_at is null and status = 'acknowledged'`);
  else if (f.status === 'resolved') parts.push(sql`resolved_at is not null`);
  if (f.kinds.length === 1) parts.push(sql`kind = ${f.kinds[0]}`);
  else if (f.kinds.length > 1) parts.push(sql`kind = any(${f.kinds}::text[])`);
  if (f.account) parts.push(sql`account = ${f.account}`);
  if (f.currency) parts.push(sql`coalesce(currency, '') = ${f.currency}::bpchar`);
  if (f.from) parts.push(sql`business_date >= ${f.from}::date`);
  if (f.to) parts.push(sql`business_date <= ${f.to}::date`);
  if (f.assignee === 'none') parts.push(sql`assignee is null`);
  else if (f.assignee) parts.push(sql`assignee = ${f.assignee}`);
  // Spelled as the worklist indexes' column, so that it bounds their range scans.
  if (f.minCents !== undefined) parts.push(sql`(-stake_cents) <= ${-f.minCents}::bigint`);
  if (f.q) {
    const id = /^\d{1,15}$/.test(f.q) ? Number(f.q) : null;
    parts.push(sql`(transaction_id = ${f.q} or merchant_transaction_id = ${f.q}
      or return_transaction_id = ${f.q}${id !== null ? sql` or discrepancy_id = ${id}::bigint` : sql``})`);
  }
  if (parts.length === 0) return sql<boolean>`true`;
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

// The worklist order; the same expressions as discrepancies_worklist_idx (migration 000800).
const ORDER_KEY = sql`(coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id)`;

type CursorKey = [string, number, string, number];

/** The cursor that continues after `item` (what next_cursor holds). */
export function encodeCursor(
  item: Pick<WorklistItem, 'currency' | 'stake_cents' | 'business_date' | 'id'>,
): string {
  const key: CursorKey = [item.currency ?? '', -item.stake_cents, item.business_date ?? 'infinity', item.id];
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string): CursorKey {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(key) &&
      key.length === 4 &&
      typeof key[0] === 'string' &&
      Number.isSafeInteger(key[1]) &&
      typeof key[2] === 'string' &&
      (key[2] === 'infinity' || isValidDate(key[2])) &&
      Number.isSafeInteger(key[3])
    )
      return key as CursorKey;
  } catch {
    // Falls through to the error below.
  }
  throw new InvalidFilter('cursor is not one this server gave: start again without it');
}

export const ITEM_COLUMNS = sql`discrepancy_id as id, account, kind, rule, status, business_date, currency,
  expected_amount_cents, actual_amount_cents, difference_cents, stake_cents, transaction_id,
  merchant_transaction_id, return_transaction_id, assignee, first_seen_at, acknowledged_by, resolution`;

/** One page of the worklist and the cursor of the next (null at the end). */
export async function worklistPage(
  db: Db,
  filter: WorklistFilter,
  page: { limit: number; cursor?: string },
): Promise<{ items: WorklistItem[]; next_cursor: string | null }> {
  const after = page.cursor ? decodeCursor(page.cursor) : undefined;
  const afterCond = after
    ? sql`and ${ORDER_KEY} > (${after[0]}::bpchar, ${after[1]}::bigint, ${after[2]}::date, ${after[3]}::bigint)`
    : sql``;
  const rows = await sql<WorklistItem>`select ${ITEM_COLUMNS} from discrepancies
    where ${filterCondition(filter)} ${afterCond}
    order by ${sql`coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`}
    limit ${page.limit + 1}`.execute(db);
  const items = rows.rows.slice(0, page.limit);
  const last = items.at(-1);
  return { items, next_cursor: rows.rows.length > page.limit && last ? encodeCursor(last) : null };
}

/**
 * Count and money at stake by account, kind and currency, over the whole filter. A filter on status,
 * kind, account, currency and business dates only is summed from discrepancy_totals (a few rows per day and kind,
 * whatever the number of discrepancies); one with an assignee, a minimum or a search reads the
 * matching discrepancies.
 */
export async function worklistTotals(db: Db, filter: WorklistFilter): Promise<Total[]> {
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
  const status = statuses[filter.status];
  if (status) parts.push(sql`status = any(${status}::text[])`);
  if (filter.kinds.length) parts.push(sql`kind = any(${filter.kinds}::text[])`);
  if (filter.account) parts.push(sql`account = ${filter.account}`);
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
export async function liveTotals(db: Db, filter: WorklistFilter): Promise<Total[]> {
  const rows = await sql<Total>`select account, kind, currency, count(*)::bigint as count,
      coalesce(sum(stake_cents), 0)::bigint as cents
    from discrepancies where ${filterCondition(filter)}
    group by account, kind, currency order by account, currency nulls last, currency, cents desc, kind`.execute(
    db,
  );
  return rows.rows;
}

/** Every item of the filter, in worklist order, a page at a time (for the CSV export). */
export async function* worklistAll(db: Db, filter: WorklistFilter, pageSize = 5000) {
  let cursor: string | undefined;
  for (;;) {
    const page = await worklistPage(db, filter, { limit: pageSize, ...(cursor ? { cursor } : {}) });
    yield* page.items;
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
  }
}
