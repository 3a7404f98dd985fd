/**
 * Which discrepancies a read or an action concerns. One filter for the terminal, the report and the
 * workbench, and the one place an account restriction applies: every read and every action of this
 * folder puts {@link filterCondition} (or {@link scopeCondition}) in its WHERE clause.
 */
import { sql, type RawBuilder } from 'kysely';
import { parseAccountName, type AccountName } from '../../domain/account-name.ts';
import { typedError } from '../../domain/errors.ts';
import { isValidDate } from '../../domain/time/calendar.ts';

/** unresolved = open or acknowledged; all = every status. */
export const STATUS_FILTERS = ['unresolved', 'open', 'acknowledged', 'resolved', 'all'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/**
 * The accounts a caller may see and act on: `'all'`, or a list (an empty list sees nothing). A read or
 * an action outside it behaves as if the discrepancy did not exist.
 */
export type AccountScope = readonly AccountName[] | 'all';

export interface DiscrepancyFilter {
  /** The default is all. */
  readonly status?: StatusFilter;
  /** Any of these kinds; none given = every kind. */
  readonly kinds?: readonly string[];
  /** One provider account (docs/connecting-a-provider.md, "Several accounts"). */
  readonly account?: AccountName;
  /** The accounts the caller may see ({@link AccountScope}); absent = all. */
  readonly accounts?: AccountScope;
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

/** A filter parameter that is refused (unknown status, malformed date, foreign cursor, ...). */
export class InvalidFilter extends typedError('final') {}

function stringParam(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined || v === '' || v === null) return undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw new InvalidFilter(`${name} must be given once`);
  return v.trim();
}

/**
 * The filter from query parameters (strings as they come; status defaults to unresolved, the
 * worklist's view); throws {@link InvalidFilter}, or InvalidAccountName for the account. The account scope is never taken from parameters.
 */
export function parseFilter(query: Record<string, unknown>): DiscrepancyFilter & { status: StatusFilter } {
  const str = (name: string) => stringParam(query, name);
  const status = str('status') ?? 'unresolved';
  if (!(STATUS_FILTERS as readonly string[]).includes(status))
    throw new InvalidFilter(`status=${status} is not known: use ${STATUS_FILTERS.join(', ')}`);
  const kinds = (str('kind') ?? '').split(',').filter((k) => k !== '');
  for (const k of kinds)
    if (!/^[a-z_]{1,64}$/.test(k)) throw new InvalidFilter(`kind=${k} is not a discrepancy kind`);
  const given = str('account');
  const account = given === undefined ? undefined : parseAccountName(given);
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

/** The filter as query parameters (for links, the CSV export and next pages); the scope stays out. */
export function filterToQuery(f: DiscrepancyFilter): Record<string, string> {
  const status = f.status ?? 'all';
  const kinds = f.kinds ?? [];
  return {
    ...(status !== 'unresolved' ? { status } : {}),
    ...(kinds.length ? { kind: kinds.join(',') } : {}),
    ...(f.account ? { account: f.account } : {}),
    ...(f.currency ? { currency: f.currency } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
    ...(f.assignee ? { assignee: f.assignee } : {}),
    ...(f.minCents !== undefined ? { min_cents: String(f.minCents) } : {}),
    ...(f.q ? { q: f.q } : {}),
  };
}

/** The account restriction alone (for reads by id): true when the scope is all. */
export function scopeCondition(accounts: AccountScope | undefined): RawBuilder<boolean> {
  if (accounts === undefined || accounts === 'all') return sql<boolean>`true`;
  return sql<boolean>`account = any(${[...accounts]}::text[])`;
}

/** The WHERE condition of a filter over discrepancies: stated once for every read and bulk action. */
export function filterCondition(f: DiscrepancyFilter): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = [];
  // resolved_at is null is spelled out for every unresolved status so the partial index applies.
  if (f.status === 'unresolved') parts.push(sql`resolved_at is null`);
  else if (f.status === 'open') parts.push(sql`resolved_at is null and status = 'open'`);
  else if (f.status === 'acknowledged') parts.push(sql`resolved_at is null and status = 'acknowledged'`);
  else if (f.status === 'resolved') parts.push(sql`resolved_at is not null`);
  const kinds = f.kinds ?? [];
  if (kinds.length === 1) parts.push(sql`kind = ${kinds[0]}`);
  else if (kinds.length > 1) parts.push(sql`kind = any(${kinds}::text[])`);
  if (f.account) parts.push(sql`account = ${f.account}`);
  if (f.accounts !== undefined && f.accounts !== 'all') parts.push(scopeCondition(f.accounts));
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
