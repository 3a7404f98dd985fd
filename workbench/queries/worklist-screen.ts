/**
 * What the worklist page shows: one section per currency that has work in the filter, each in
 * worklist order (the most money at stake first, then the oldest), so that the first screen holds
 * every currency instead of the first currency's thirty pages. A filter on one currency (or a
 * warehouse with one) gets the whole page, paged both ways with its position ("51–100 of 1,234").
 */
import type { Db } from '../../db/database.ts';
import type { DiscrepancyFilter } from '../../reconcile/discrepancies/filter.ts';
import { worklistPage, worklistTotals, type Total } from '../../reconcile/discrepancies/read.ts';
import type { DiscrepancyRow } from '../../reconcile/discrepancies/row.ts';

/** Where a page of one currency starts: after or before a cursor, and its 1-based position. */
export interface Paging {
  readonly after?: string;
  readonly before?: string;
  readonly at?: number;
}

export interface WorklistSection {
  /** null for discrepancies recorded without a currency. */
  readonly currency: string | null;
  /** How many discrepancies of the filter are in this currency, and their money at stake. */
  readonly count: number;
  readonly cents: number;
  readonly items: DiscrepancyRow[];
  /** 1-based position of the first item among `count`. */
  readonly start: number;
  /** Paging of this currency, as query parameters to add to the filter's (absent: no such page). */
  readonly next?: Record<string, string>;
  readonly prev?: Record<string, string>;
  /** The whole list of this currency is on other pages: the filter narrowed to it. */
  readonly all?: Record<string, string>;
}

export interface WorklistScreen {
  readonly sections: WorklistSection[];
  readonly totals: Total[];
  /** One currency on the whole page, paged; or several, a few items each. */
  readonly paged: boolean;
}

/** Items per page when one currency has the page. */
export const PAGE_SIZE = 50;

/** Items per currency on a page with several: enough to start on, all within a 900-pixel screen. */
export function itemsPerCurrency(currencies: number): number {
  return Math.min(7, Math.max(3, Math.floor(14 / Math.max(1, currencies))));
}

interface CurrencyTotal {
  currency: string | null;
  count: number;
  cents: number;
}

function byCurrency(totals: Total[]): CurrencyTotal[] {
  const out = new Map<string | null, CurrencyTotal>();
  for (const t of totals) {
    const c = out.get(t.currency) ?? { currency: t.currency, count: 0, cents: 0 };
    c.count += Number(t.count);
    c.cents += Number(t.cents);
    out.set(t.currency, c);
  }
  return [...out.values()].sort((a, b) =>
    a.currency === b.currency
      ? 0
      : a.currency === null
        ? 1
        : b.currency === null
          ? -1
          : a.currency < b.currency
            ? -1
            : 1,
  );
}

async function pagedSection(db: Db, filter: DiscrepancyFilter, total: CurrencyTotal, paging: Paging) {
  const page = await worklistPage(db, filter, {
    limit: PAGE_SIZE,
    ...(paging.after ? { cursor: paging.after } : paging.before ? { before: paging.before } : {}),
  });
  const start = page.prev_cursor === null ? 1 : Math.max(2, paging.at ?? 1);
  const section: WorklistSection = {
    ...total,
    items: page.items,
    start,
    ...(page.next_cursor ? { next: { after: page.next_cursor, at: String(start + page.items.length) } } : {}),
    ...(page.prev_cursor
      ? { prev: { before: page.prev_cursor, at: String(Math.max(1, start - PAGE_SIZE)) } }
      : {}),
  };
  return section;
}

async function firstItems(db: Db, filter: DiscrepancyFilter, total: CurrencyTotal, limit: number) {
  if (total.currency === null) {
    // No currency sorts first in worklist order: the filter's first page begins with these.
    const page = await worklistPage(db, filter, { limit });
    const items = page.items.filter((i) => i.currency === null);
    return { ...total, items, start: 1 } satisfies WorklistSection;
  }
  const narrowed = { ...filter, currency: total.currency };
  const page = await worklistPage(db, narrowed, { limit });
  const section: WorklistSection = {
    ...total,
    items: page.items,
    start: 1,
    ...(page.next_cursor
      ? {
          next: { currency: total.currency, after: page.next_cursor, at: String(page.items.length + 1) },
          all: { currency: total.currency },
        }
      : {}),
  };
  return section;
}

/** The sections of the worklist page for a filter (and, with one currency, the page asked for). */
export async function worklistScreen(
  db: Db,
  filter: DiscrepancyFilter,
  paging: Paging,
): Promise<WorklistScreen> {
  const totals = await worklistTotals(db, filter);
  const currencies = byCurrency(totals);
  const paged = filter.currency !== undefined || currencies.length <= 1;
  if (paged) {
    const total = currencies[0] ?? { currency: filter.currency ?? null, count: 0, cents: 0 };
    return { sections: [await pagedSection(db, filter, total, paging)], totals, paged };
  }
  const limit = itemsPerCurrency(currencies.length);
  const sections: WorklistSection[] = [];
  for (const c of currencies) sections.push(await firstItems(db, filter, c, limit));
  return { sections, totals, paged };
}
