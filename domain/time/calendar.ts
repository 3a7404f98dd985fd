/**
 * Calendar arithmetic shared by the time conversions, with small bounded caches: a report holds few
 * distinct dates, so validating and formatting each date once keeps regexes and `Date` objects off the
 * per-row path of million-row files. Nothing here depends on the host's TZ.
 */

export const DAY_MS = 86_400_000;

const CACHE_LIMIT = 4096;

/** Stores a value in a bounded cache (emptied when full, so memory never grows with the input). */
export function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
  if (map.size >= CACHE_LIMIT) map.clear();
  map.set(key, value);
  return value;
}

export interface CalendarDay {
  /** `YYYY-MM-DD`. */
  readonly iso: string;
  /** Midnight of that date read as UTC, in ms since the epoch. */
  readonly ms: number;
}

const DATE_COMPACT = /^(\d{4})(\d{2})(\d{2})$/;
const DATE_DASHED = /^(\d{4})-(\d{2})-(\d{2})$/;
const calendarDays = new Map<string, CalendarDay>();
const isoDates = new Map<number, string>();

/**
 * Validates a date `YYYYMMDD` or `YYYY-MM-DD`.
 * @throws RangeError naming the value when it is malformed or does not exist (20260230).
 */
export function calendarDay(date: string): CalendarDay {
  const known = calendarDays.get(date);
  if (known !== undefined) return known;
  const m = DATE_COMPACT.exec(date) ?? DATE_DASHED.exec(date);
  if (!m) throw new RangeError(`date '${date}' is not YYYYMMDD or YYYY-MM-DD`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  // Year 0 does not exist (1 BC is followed by AD 1; PostgreSQL refuses 0000-01-01).
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) {
    throw new RangeError(`date '${date}' does not exist`);
  }
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  return remember(calendarDays, date, {
    iso: `${m[1]}-${m[2]}-${m[3]}`,
    ms: new Date(0).setUTCFullYear(y, mo - 1, d),
  });
}

/**
 * Validates a date written exactly `YYYY-MM-DD` (the one spelling of the command line and of every
 * range) and returns it.
 * @throws RangeError naming the value when it is written otherwise (2026/04/01, 20260401) or does not
 * exist (2026-02-30).
 */
export function isoDate(date: string): string {
  if (!DATE_DASHED.test(date)) throw new RangeError(`date '${date}' is not written YYYY-MM-DD`);
  return calendarDay(date).iso;
}

/** Whether `date` is a date that exists, written exactly `YYYY-MM-DD` (2026-02-30 is not). */
export function isValidDate(date: string): boolean {
  if (!DATE_DASHED.test(date)) return false;
  try {
    calendarDay(date);
    return true;
  } catch {
    return false;
  }
}

/**
 * Validates a date written `YYYYMMDD` or `YYYY-MM-DD` (the provider's files use both) and returns it
 * as `YYYY-MM-DD`.
 * @throws RangeError naming the value when it is malformed or does not exist (20260230).
 */
export function normaliseDate(date: string): string {
  return calendarDay(date).iso;
}

/** Days since 1970-01-01 of a date (`YYYY-MM-DD` or `YYYYMMDD`); throws like {@link calendarDay}. */
export function epochDay(date: string): number {
  return calendarDay(date).ms / DAY_MS;
}

/** `YYYY-MM-DD` of a day counted since 1970-01-01. */
export function dateOfEpochDay(day: number): string {
  return utcDateOf(day * DAY_MS);
}

/** `date` moved by `n` calendar days (negative goes back). */
export function addDays(date: string, n: number): string {
  return dateOfEpochDay(epochDay(date) + n);
}

/** Days in `from`..`to`, both inclusive: 1 when equal, 0 or less when `to` is earlier. */
export function daysInclusive(from: string, to: string): number {
  return epochDay(to) - epochDay(from) + 1;
}

/** Every date from `from` to `to` inclusive (none when `to` is earlier). */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = epochDay(from), last = epochDay(to); d <= last; d++) out.push(dateOfEpochDay(d));
  return out;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** `YYYY-MM-DD` of the UTC day containing `ms`. */
export function utcDateOf(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  const known = isoDates.get(day);
  return known ?? remember(isoDates, day, new Date(day * DAY_MS).toISOString().slice(0, 10));
}

/** `YYYY-MM-DDTHH:MM:SS` of `ms` (whole seconds, UTC). */
export function utcSecondsOf(ms: number): string {
  const dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
  const seconds = Math.floor((ms - dayStart) / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor(seconds / 60) % 60;
  const s = seconds % 60;
  return `${utcDateOf(ms)}T${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}:${s < 10 ? '0' : ''}${s}`;
}

/** Two ASCII digits at `i` as a number, or -1. */
export function twoDigits(text: string, i: number): number {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** @internal Empties the caches (tests). */
export function clearCalendarCaches(): void {
  calendarDays.clear();
  isoDates.clear();
}
