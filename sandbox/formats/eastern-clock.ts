/**
 * Eastern time (America/Toronto) for writing the provider's formats. The rules are computed, not looked
 * up, because the sandbox converts millions of instants: since 2007 daylight time starts on the second
 * Sunday of March at 02:00 EST (07:00 UTC) and ends on the first Sunday of November at 02:00 EDT
 * (06:00 UTC). Instants are microseconds since the epoch (a safe integer until the year 2255), so the
 * report's microsecond timestamps survive.
 */

const HOUR_US = 3_600_000_000;
const DAY_MS = 86_400_000;

function nthSundayUtc(year: number, month: number, nth: number): number {
  const firstDow = new Date(Date.UTC(year, month, 1)).getUTCDay();
  return 1 + ((7 - firstDow) % 7) + (nth - 1) * 7;
}

const transitions = new Map<number, { startMs: number; endMs: number }>();

/** Daylight saving start and end of `year`, as UTC epoch milliseconds. */
export function dstTransitions(year: number): { startMs: number; endMs: number } {
  let t = transitions.get(year);
  if (!t) {
    t = {
      startMs: Date.UTC(year, 2, nthSundayUtc(year, 2, 2), 7),
      endMs: Date.UTC(year, 10, nthSundayUtc(year, 10, 1), 6),
    };
    transitions.set(year, t);
  }
  return t;
}

/** Offset of Eastern time from UTC at `utcMs`, in minutes (-240 in daylight time, -300 otherwise). */
export function easternOffsetMinutes(utcMs: number): number {
  const { startMs, endMs } = dstTransitions(new Date(utcMs).getUTCFullYear());
  return utcMs >= startMs && utcMs < endMs ? -240 : -300;
}

export interface EasternWallTime {
  /** YYYY-MM-DD */
  readonly date: string;
  /** YYYYMMDD, as the legacy CSV writes it. */
  readonly compactDate: string;
  /** HHMMSS */
  readonly time: string;
  /** The wall time happened twice (01:00-01:59 on the fall-back day), on either side of the change. */
  readonly fold: boolean;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Eastern wall-clock date and time of an instant (seconds truncated). */
export function easternWallTime(utcUs: number): EasternWallTime {
  const utcMs = Math.floor(utcUs / 1000);
  const local = new Date(utcMs + easternOffsetMinutes(utcMs) * 60_000);
  const y = local.getUTCFullYear();
  const m = local.getUTCMonth() + 1;
  const d = local.getUTCDate();
  const { endMs } = dstTransitions(y);
  const fold = utcMs >= endMs - 3_600_000 && utcMs < endMs + 3_600_000;
  const date = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
  return {
    date,
    compactDate: date.replaceAll('-', ''),
    time: `${pad(local.getUTCHours())}${pad(local.getUTCMinutes())}${pad(local.getUTCSeconds())}`,
    fold,
  };
}

/** Eastern calendar date (YYYY-MM-DD) of an instant given in microseconds. */
export function easternDate(utcUs: number): string {
  return easternWallTime(utcUs).date;
}

/** UTC epoch milliseconds of Eastern midnight starting `day` (YYYY-MM-DD or YYYYMMDD). */
export function easternMidnightMs(day: string): number {
  const compact = day.replaceAll('-', '');
  const y = Number(compact.slice(0, 4));
  const m = Number(compact.slice(4, 6)) - 1;
  const d = Number(compact.slice(6, 8));
  // Midnight is never inside a transition (they happen at 02:00), so the offset in force four hours
  // after UTC midnight of the same date, before any transition of that day, is the right one.
  const utcMidnight = Date.UTC(y, m, d);
  return utcMidnight - easternOffsetMinutes(utcMidnight + 4 * 3_600_000) * 60_000;
}

/** Adds `days` calendar days to YYYY-MM-DD. */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Calendar days from `from` to `to` inclusive (1 when equal, 0 or less when `to` is earlier). */
export function daysInclusive(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

/** `2026-03-08T07:30:00.123456Z` from microseconds since the epoch. */
export function isoMicros(utcUs: number): string {
  const ms = Math.floor(utcUs / 1000);
  const micros = utcUs - ms * 1000 + (ms - Math.floor(ms / 1000) * 1000) * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`;
}

/** Microseconds since the epoch from an ISO instant with up to six fraction digits. */
export function parseIsoMicros(iso: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:?\d{2})$/.exec(iso);
  if (!m) throw new RangeError(`${JSON.stringify(iso)} is not an ISO-8601 instant`);
  const wholeMs = Date.parse(`${m[1]}${m[3] === 'Z' ? 'Z' : m[3]}`);
  if (Number.isNaN(wholeMs)) throw new RangeError(`${JSON.stringify(iso)} is not a valid instant`);
  return wholeMs * 1000 + Number((m[2] ?? '').padEnd(6, '0'));
}

export const HOUR_MICROS = HOUR_US;
