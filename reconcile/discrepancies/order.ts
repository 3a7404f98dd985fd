/**
 * The orders discrepancies are read in. The worklist order is the workbench's and the report's
 * "largest open" list's: per currency (no currency last), money at stake first, then the earliest
 * business date, then the id; amounts of different currencies are never compared. It is the order
 * of discrepancies_worklist_idx (migration 0003, the unresolved) and discrepancies_worklist_resolved_idx
 * (0054, the resolved), and the cursor pages along them.
 */
import { sql, type RawBuilder } from 'kysely';
import { isValidDate } from '../../domain/time/calendar.ts';
import { InvalidFilter } from './filter.ts';
import type { DiscrepancyRow } from './row.ts';

/**
 * worklist: as above; worklist_backwards: the same read from its end (the page before a cursor, on
 * the same index); newest: the latest business date first (the terminal's list); date: the earliest
 * business date first, then kind (the report's detail table and CSV).
 */
export type DiscrepancyOrder = 'worklist' | 'worklist_backwards' | 'newest' | 'date';

const WORKLIST_KEY = sql`coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`;

export const ORDER_BY: Record<DiscrepancyOrder, RawBuilder<unknown>> = {
  worklist: WORKLIST_KEY,
  worklist_backwards: sql`coalesce(currency, '') desc, (-stake_cents) desc,
    coalesce(business_date, 'infinity'::date) desc, discrepancy_id desc`,
  newest: sql`business_date desc nulls last, discrepancy_id`,
  date: sql`business_date, kind, discrepancy_id`,
};

/** The worklist order in memory, for rows already read. */
export function worklistCompare(a: DiscrepancyRow, b: DiscrepancyRow): number {
  return (
    (a.currency ?? '\uffff').localeCompare(b.currency ?? '\uffff') ||
    b.stake_cents - a.stake_cents ||
    (a.business_date ?? '\uffff').localeCompare(b.business_date ?? '\uffff') ||
    a.discrepancy_id - b.discrepancy_id
  );
}

type CursorKey = [string, number, string, number];

/** The cursor that continues the worklist order after `row` (what next_cursor holds). */
export function encodeCursor(
  row: Pick<DiscrepancyRow, 'currency' | 'stake_cents' | 'business_date' | 'discrepancy_id'>,
): string {
  const key: CursorKey = [
    row.currency ?? '',
    -row.stake_cents,
    row.business_date ?? 'infinity',
    row.discrepancy_id,
  ];
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

/** The condition "after the cursor" in the worklist order; throws InvalidFilter for a foreign cursor. */
export function afterCursor(cursor: string): RawBuilder<boolean> {
  const after = decodeCursor(cursor);
  return sql<boolean>`(${WORKLIST_KEY}) > (${after[0]}::bpchar, ${after[1]}::bigint, ${after[2]}::date, ${after[3]}::bigint)`;
}

/** The condition "before the cursor" in the worklist order (the previous page); as {@link afterCursor}. */
export function beforeCursor(cursor: string): RawBuilder<boolean> {
  const before = decodeCursor(cursor);
  return sql<boolean>`(${WORKLIST_KEY}) < (${before[0]}::bpchar, ${before[1]}::bigint, ${before[2]}::date, ${before[3]}::bigint)`;
}
