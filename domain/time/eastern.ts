/**
 * Eastern time (America/Toronto) to UTC and back, as docs/provider-interface.md 4.4 states: the one place where the
 * legacy interface's local dates and times become UTC instants, and where instants get their Eastern
 * date and wall clock (the sandbox's writers included).
 *
 * Why not date-fns-tz: `fromZonedTime` moves a time in the skipped spring-forward hour BACKWARD, and
 * resolves the repeated fall-back hour differently depending on the host's TZ. Here the zone's offsets
 * come only from `Intl.DateTimeFormat` with an explicit `timeZone` (never the host zone). For each day,
 * the offsets in force a day before and two days after are compared; when they differ, the instant of
 * the switch is found by bisection (once per day, cached). A local time then has two candidate instants,
 * one per offset, each real only on its side of the switch:
 * - both candidate instants valid → the local time happened twice (fold): the EARLIER instant, i.e. the
 *   offset in force before the transition (daylight), flagged `dst_fold`;
 * - neither valid → the local time never happened (gap): it is moved FORWARD by the gap, which is the
 *   same as reading it with the offset in force before the transition, flagged `dst_gap`.
 *
 * Instants are returned as ISO-8601 UTC strings with six fraction digits (`2026-03-08T07:30:00.000000Z`),
 * the warehouse's canonical form (domain/records.ts). Invalid input throws a `RangeError` whose message
 * names the value; parsers turn it into a rejected row.
 */

import {
  addDays,
  calendarDay,
  clearCalendarCaches,
  DAY_MS,
  remember,
  twoDigits,
  utcDateOf,
  utcSecondsOf,
} from './calendar.ts';

export type LocalTimeFlag = 'dst_gap' | 'dst_fold';

export interface EasternInstant {
  /** The UTC instant, `YYYY-MM-DDTHH:MM:SS.000000Z`. */
  readonly utc: string;
  /** Set when the local time was skipped (`dst_gap`) or repeated (`dst_fold`); null otherwise. */
  readonly flag: LocalTimeFlag | null;
}

const ZONE = 'America/Toronto';
const MINUTE = 60_000;
const DAY = DAY_MS;

const formatter = new Intl.DateTimeFormat('en-US', {
  timeZone: ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Offset of America/Toronto (local minus UTC, in ms) at the UTC instant `utcMs`. */
function offsetAt(utcMs: number): number {
  // Seconds only: the zone's offsets are whole minutes, and a fraction would only blur the comparison.
  const whole = Math.floor(utcMs / 1000) * 1000;
  const part: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {};
  for (const p of formatter.formatToParts(whole)) part[p.type] = Number(p.value);
  const at = (type: Intl.DateTimeFormatPartTypes) => part[type] ?? 0;
  return Date.UTC(at('year'), at('month') - 1, at('day'), at('hour'), at('minute'), at('second')) - whole;
}

// A bounded cache keeps 1M-row files fast without growing with the input: most days have one offset.
const dayOffsets = new Map<number, DayOffsets>();

/** @internal Empties the caches, so that tests can prove the host TZ plays no part. */
export function clearEasternCaches(): void {
  dayOffsets.clear();
  clearCalendarCaches();
}

interface DayOffsets {
  readonly before: number;
  readonly after: number;
  /** First UTC instant (ms) with the `after` offset; +Infinity on a day without a transition. */
  readonly transition: number;
}

/**
 * Offsets around the day starting at `dayStartMs` (a UTC day, or a local day with its wall clock read
 * as if UTC): the offset a day before and two days after, and, when they differ, the UTC instant (to
 * the second) at which the zone switches, found once per day by bisection. Any instant within a day of
 * either reading of that day lies inside this window. Toronto never changes twice in three days.
 */
function offsetsAround(dayStartMs: number): DayOffsets {
  const cached = dayOffsets.get(dayStartMs);
  if (cached !== undefined) return cached;
  let lo = dayStartMs - DAY;
  let hi = dayStartMs + 2 * DAY;
  const before = offsetAt(lo);
  const after = offsetAt(hi);
  if (before === after) {
    return remember(dayOffsets, dayStartMs, { before, after, transition: Number.POSITIVE_INFINITY });
  }
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2000) * 1000;
    if (offsetAt(mid) === before) lo = mid;
    else hi = mid;
  }
  return remember(dayOffsets, dayStartMs, { before, after, transition: hi });
}

/** Resolves a local wall-clock time (as if UTC, ms) to a UTC instant, detecting gap and fold. */
function resolveLocal(localMs: number): { utcMs: number; flag: LocalTimeFlag | null } {
  const day = offsetsAround(localMs - (((localMs % DAY) + DAY) % DAY));
  if (day.before === day.after) return { utcMs: localMs - day.before, flag: null };
  // The two readings of the wall clock; each is real only on its side of the transition.
  const early = localMs - day.before;
  const late = localMs - day.after;
  const earlyValid = early < day.transition;
  const lateValid = late >= day.transition;
  if (earlyValid && lateValid && early !== late) {
    return { utcMs: Math.min(early, late), flag: 'dst_fold' };
  }
  if (earlyValid) return { utcMs: early, flag: null };
  if (lateValid) return { utcMs: late, flag: null };
  // Skipped: moved forward by the gap = read with the offset in force before the transition.
  return { utcMs: early, flag: 'dst_gap' };
}

/**
 * Converts an Eastern (America/Toronto) local date and time to a UTC instant.
 *
 * A time in the skipped spring-forward hour is moved forward by the gap and flagged `dst_gap`; a time
 * in the repeated fall-back hour takes the earlier (daylight) offset and is flagged `dst_fold`. The
 * result does not depend on the host's TZ.
 *
 * @param date `YYYYMMDD` or `YYYY-MM-DD`
 * @param time `HHMMSS` (24-hour), or null for midnight (the start of the day)
 * @throws RangeError naming the value when the date or time is malformed or does not exist.
 */
export function easternToUtc(date: string, time: string | null): EasternInstant {
  const day = calendarDay(date);
  let seconds = 0;
  if (time !== null) {
    const h = twoDigits(time, 0);
    const mi = twoDigits(time, 2);
    const s = twoDigits(time, 4);
    if (time.length !== 6 || h < 0 || mi < 0 || s < 0) throw new RangeError(`time '${time}' is not HHMMSS`);
    if (h > 23 || mi > 59 || s > 59) throw new RangeError(`time '${time}' does not exist`);
    seconds = h * 3600 + mi * 60 + s;
  }
  const { utcMs, flag } = resolveLocal(day.ms + seconds * 1000);
  return { utc: formatUtc(utcMs), flag };
}

/**
 * UTC instant (ms since the epoch) at which the Eastern day `date` starts: its local midnight, or the
 * first instant after it if midnight were ever skipped.
 * @throws RangeError when the date is malformed or does not exist.
 */
export function easternDayStartMs(date: string): number {
  return resolveLocal(calendarDay(date).ms).utcMs;
}

/** {@link easternDayStartMs} as `YYYY-MM-DDTHH:MM:SS.000000Z`. */
export function easternDayStartUtc(date: string): string {
  return formatUtc(easternDayStartMs(date));
}

/** Offset of Eastern time from UTC (local minus UTC, in ms) at the UTC instant `utcMs`. */
export function easternOffsetMs(utcMs: number): number {
  return offsetOfUtcDay(utcMs);
}

export interface EasternWallClock {
  /** The Eastern wall-clock time of the instant, read as if it were UTC (ms since the epoch). */
  readonly localMs: number;
  /** The wall time happened twice (the repeated hour of the fall-back day), on either side of it. */
  readonly fold: boolean;
}

/** The Eastern wall clock at the UTC instant `utcMs`. */
export function easternWallClock(utcMs: number): EasternWallClock {
  const localMs = utcMs + offsetOfUtcDay(utcMs);
  return { localMs, fold: resolveLocal(localMs).flag === 'dst_fold' };
}

/** The Eastern calendar date, `YYYY-MM-DD`, of the UTC instant `utcMs`. */
export function easternDateOfMs(utcMs: number): string {
  return utcDateOf(utcMs + offsetOfUtcDay(utcMs));
}

/**
 * The instant (UTC ms) at which the Eastern offset changes during the Eastern day `date`, and whether
 * the clocks go back then; null on a day without a change.
 */
export function easternOffsetChangeOn(
  date: string,
): { readonly atMs: number; readonly fallBack: boolean } | null {
  const around = offsetsAround(calendarDay(date).ms);
  if (around.before === around.after) return null;
  const start = easternDayStartMs(date);
  const end = easternDayStartMs(addDays(date, 1));
  if (around.transition < start || around.transition >= end) return null;
  return { atMs: around.transition, fallBack: around.after < around.before };
}

const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * The Eastern (America/Toronto) calendar date, `YYYY-MM-DD`, of a UTC instant given as ISO-8601 with
 * `Z` or an explicit offset (fractions of any length are accepted; they cannot change the date).
 * @throws RangeError when the value is not such an instant.
 */
export function easternDateOf(utcIso: string): string {
  const m = ISO_INSTANT.exec(utcIso);
  if (!m) throw new RangeError(`instant '${utcIso}' is not ISO-8601 with Z or an offset`);
  const day = calendarDay(m[1] as string);
  const h = Number(m[2]);
  const mi = Number(m[3]);
  const s = Number(m[4]);
  if (h > 23 || mi > 59 || s > 59) throw new RangeError(`instant '${utcIso}' has an impossible time`);
  let ms = day.ms + ((h * 60 + mi) * 60 + s) * 1000;
  const zone = m[5] as string;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const sign = digits[0] === '-' ? -1 : 1;
    ms -= sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * MINUTE;
  }
  return easternDateOfMs(ms);
}

/** Offset at `utcMs`, from the cached offsets around its UTC day (no Intl call on most rows). */
function offsetOfUtcDay(utcMs: number): number {
  const day = offsetsAround(utcMs - (((utcMs % DAY) + DAY) % DAY));
  return utcMs < day.transition ? day.before : day.after;
}

function formatUtc(ms: number): string {
  // Only the fraction is widened to microseconds: these instants are whole seconds.
  return `${utcSecondsOf(ms)}.000000Z`;
}
