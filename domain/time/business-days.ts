/**
 * Canadian bank-holiday calendar, computed (no table to keep up to date), for grace periods counted
 * in business days. The set follows the days on which Canadian banks and the clearing system do not
 * settle: New Year's Day, Good Friday, Victoria Day, Canada Day, Civic Holiday (first Monday of
 * August; observed by the clearing system although not a statutory holiday everywhere, so it is an
 * option, on by default), Labour Day, National Day for Truth and Reconciliation (from 2021),
 * Thanksgiving, Remembrance Day, Christmas Day and Boxing Day. A fixed-date holiday on a Saturday or
 * Sunday is observed on the next weekday that is not already a holiday (so Christmas on a Saturday is
 * observed Monday the 27th and Boxing Day Tuesday the 28th). Dates are `YYYY-MM-DD` Eastern dates.
 */

import { dateOfEpochDay, DAY_MS, epochDay } from './calendar.ts';

export interface CalendarOptions {
  /** Count the Civic Holiday (first Monday of August) as a holiday. Default true. */
  readonly civicHoliday?: boolean;
}

function weekday(days: number): number {
  return new Date(days * DAY_MS).getUTCDay();
}
function ymd(year: number, month: number, day: number): number {
  return Date.UTC(year, month - 1, day) / DAY_MS;
}
/** The n-th (1-based) given weekday of a month. */
function nthWeekday(year: number, month: number, dow: number, n: number): number {
  const first = ymd(year, month, 1);
  return first + ((dow - weekday(first) + 7) % 7) + (n - 1) * 7;
}

/** Easter Sunday (Gregorian, anonymous algorithm), as days since the epoch. */
function easter(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return ymd(year, month, day);
}

const cache = new Map<string, Map<string, string>>();

/** The holidays of one year as a map from observed date to holiday name. */
export function canadianBankHolidays(year: number, options: CalendarOptions = {}): Map<string, string> {
  const civic = options.civicHoliday ?? true;
  const cacheKey = `${year}:${civic}`;
  const hit = cache.get(cacheKey);
  if (hit) return hit;
  const taken = new Map<number, string>();
  // Holidays that always fall on a weekday.
  taken.set(easter(year) - 2, 'Good Friday');
  // Victoria Day: the last Monday before May 25.
  const may24 = ymd(year, 5, 24);
  taken.set(may24 - ((weekday(may24) + 6) % 7), 'Victoria Day');
  if (civic) taken.set(nthWeekday(year, 8, 1, 1), 'Civic Holiday');
  taken.set(nthWeekday(year, 9, 1, 1), 'Labour Day');
  taken.set(nthWeekday(year, 10, 1, 2), 'Thanksgiving');
  // Fixed dates, in calendar order, moved to the next free weekday when on a weekend.
  const fixed: [number, number, string][] = [
    [1, 1, "New Year's Day"],
    [7, 1, 'Canada Day'],
    ...(year >= 2021
      ? [[9, 30, 'National Day for Truth and Reconciliation'] as [number, number, string]]
      : []),
    [11, 11, 'Remembrance Day'],
    [12, 25, 'Christmas Day'],
    [12, 26, 'Boxing Day'],
  ];
  for (const [month, day, name] of fixed) {
    let d = ymd(year, month, day);
    while (weekday(d) === 0 || weekday(d) === 6 || taken.has(d)) d += 1;
    taken.set(d, name);
  }
  const result = new Map(
    [...taken.entries()].sort((a, b) => a[0] - b[0]).map(([d, n]) => [dateOfEpochDay(d), n]),
  );
  cache.set(cacheKey, result);
  return result;
}

/** Whether `date` is a business day: Monday to Friday and not a Canadian bank holiday. */
export function isBusinessDay(date: string, options: CalendarOptions = {}): boolean {
  const days = epochDay(date);
  const dow = weekday(days);
  if (dow === 0 || dow === 6) return false;
  return !canadianBankHolidays(Number(date.slice(0, 4)), options).has(date);
}

/** The date `n` business days after `date` (n >= 0; n = 0 returns `date` itself). */
export function addBusinessDays(date: string, n: number, options: CalendarOptions = {}): string {
  let days = epochDay(date);
  let left = n;
  while (left > 0) {
    days += 1;
    if (isBusinessDay(dateOfEpochDay(days), options)) left -= 1;
  }
  return dateOfEpochDay(days);
}

/** Business days strictly after `from` up to and including `to` (0 when `to` <= `from`). */
export function businessDaysBetween(from: string, to: string, options: CalendarOptions = {}): number {
  let count = 0;
  for (let d = epochDay(from) + 1; d <= epochDay(to); d++)
    if (isBusinessDay(dateOfEpochDay(d), options)) count++;
  return count;
}

/**
 * The `n` business days before `date` (not including it), oldest first.
 *
 * @example businessDaysBefore('2026-03-09', 2) // ['2026-03-05', '2026-03-06'] (Thursday, Friday)
 */
export function businessDaysBefore(date: string, n: number, options: CalendarOptions = {}): string[] {
  const out: string[] = [];
  for (let d = epochDay(date) - 1; out.length < n; d--) {
    const day = dateOfEpochDay(d);
    if (isBusinessDay(day, options)) out.push(day);
  }
  return out.reverse();
}
