/**
 * Eastern time (America/Toronto) to UTC and back, exactly as PRODUCT.md says: the one place where the
 * legacy interface's local dates and times become UTC instants.
 *
 * Why not date-fns-tz: `fromZonedTime` moves a time in the skipped spring-forward hour BACKWARD, and
 * resolves the repeated fall-back hour differently depending on the host's TZ. Here the zone's offsets
 * come only from `Intl.DateTimeFormat` with an explicit `timeZone` (never the host zone), and the gap and
 * the fold are detected by comparing the offsets in force a day before and a day after the local time:
 * - both candidate instants valid → the local time happened twice (fold): the EARLIER instant, i.e. the
 *   offset in force before the transition (daylight), flagged `dst_fold`;
 * - neither valid → the local time never happened (gap): it is moved FORWARD by the gap, which is the
 *   same as reading it with the offset in force before the transition, flagged `dst_gap`.
 *
 * Instants are returned as ISO-8601 UTC strings with six fraction digits (`2026-03-08T07:30:00.000000Z`),
 * the warehouse's canonical form (lib/records.ts). Invalid input throws a `RangeError` whose message
 * names the value; parsers turn it into a rejected row.
 */

export type LocalTimeFlag = 'dst_gap' | 'dst_fold';

export interface EasternInstant {
  /** The UTC instant, `YYYY-MM-DDTHH:MM:SS.000000Z`. */
  readonly utc: string;
  /** Set when the local time was skipped (`dst_gap`) or repeated (`dst_fold`); null otherwise. */
  readonly flag: LocalTimeFlag | null;
}

const ZONE = 'America/Toronto';
const MINUTE = 60_000;
const DAY = 86_400_000;

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
  let y = 0;
  let mo = 0;
  let d = 0;
  let h = 0;
  let mi = 0;
  let s = 0;
  for (const part of formatter.formatToParts(whole)) {
    switch (part.type) {
      case 'year':
        y = Number(part.value);
        break;
      case 'month':
        mo = Number(part.value);
        break;
      case 'day':
        d = Number(part.value);
        break;
      case 'hour':
        h = Number(part.value);
        break;
      case 'minute':
        mi = Number(part.value);
        break;
      case 'second':
        s = Number(part.value);
        break;
    }
  }
  return Date.UTC(y, mo - 1, d, h, mi, s) - whole;
}

// Bounded caches keep 1M-row files fast without growing with the input: most days have one offset.
const CACHE_LIMIT = 4096;
const dayOffsets = new Map<number, DayOffsets>();

/** @internal Empties the offset caches, so that tests can prove the host TZ plays no part. */
export function clearEasternCaches(): void {
  dayOffsets.clear();
  lastDate = '';
  formattedDay = Number.NaN;
}

function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
  if (map.size >= CACHE_LIMIT) map.clear();
  map.set(key, value);
  return value;
}

/**
 * Offsets around the day starting at `dayStartMs` (a UTC day, or a local day with its wall clock read
 * as if UTC): the offset a day before and two days after, and, when they differ, the UTC instant (to
 * the second) at which the zone switches, found once per day by bisection. Any instant within a day of
 * either reading of that day lies inside this window. Toronto never changes twice in three days.
 */
interface DayOffsets {
  readonly before: number;
  readonly after: number;
  /** First UTC instant (ms) with the `after` offset; +Infinity on a day without a transition. */
  readonly transition: number;
}

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

const DATE_COMPACT = /^(\d{4})(\d{2})(\d{2})$/;
const DATE_DASHED = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_COMPACT = /^(\d{2})(\d{2})(\d{2})$/;

/**
 * Validates a calendar date `YYYYMMDD` or `YYYY-MM-DD` and returns it as `YYYY-MM-DD`.
 * @throws RangeError naming the value when it is malformed or does not exist (20260230).
 */
export function normaliseDate(date: string): string {
  // Report rows come in date order: one remembered answer saves the regex on almost every row.
  if (date === lastDate) return lastNormalised;
  const m = DATE_COMPACT.exec(date) ?? DATE_DASHED.exec(date);
  if (!m) throw new RangeError(`date '${date}' is not YYYYMMDD or YYYY-MM-DD`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) {
    throw new RangeError(`date '${date}' does not exist`);
  }
  lastNormalised = `${m[1]}-${m[2]}-${m[3]}`;
  lastDate = date;
  return lastNormalised;
}

let lastDate = '';
let lastNormalised = '';

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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
  const day = normaliseDate(date);
  let seconds = 0;
  if (time !== null) {
    const t = TIME_COMPACT.exec(time);
    if (!t) throw new RangeError(`time '${time}' is not HHMMSS`);
    const h = Number(t[1]);
    const mi = Number(t[2]);
    const s = Number(t[3]);
    if (h > 23 || mi > 59 || s > 59) throw new RangeError(`time '${time}' does not exist`);
    seconds = h * 3600 + mi * 60 + s;
  }
  const localMs =
    Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + seconds * 1000;
  const { utcMs, flag } = resolveLocal(localMs);
  return { utc: formatUtc(utcMs), flag };
}

/**
 * UTC instant at which the Eastern day `date` starts (its local midnight, or the first instant after
 * it if midnight were ever skipped), as `YYYY-MM-DDTHH:MM:SS.000000Z`.
 * @throws RangeError when the date is malformed or does not exist.
 */
export function easternDayStartUtc(date: string): string {
  return easternToUtc(date, null).utc;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * The Eastern (America/Toronto) calendar date, `YYYY-MM-DD`, of a UTC instant given as ISO-8601 with
 * `Z` or an explicit offset (fractions of any length are accepted; they cannot change the date).
 * @throws RangeError when the value is not such an instant.
 */
export function easternDateOf(utcIso: string): string {
  const m = ISO_INSTANT.exec(utcIso);
  if (!m) throw new RangeError(`instant '${utcIso}' is not ISO-8601 with Z or an offset`);
  normaliseDate(`${m[1]}${m[2]}${m[3]}`);
  const h = Number(m[4]);
  const mi = Number(m[5]);
  const s = Number(m[6]);
  if (h > 23 || mi > 59 || s > 59) throw new RangeError(`instant '${utcIso}' has an impossible time`);
  let ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), h, mi, s);
  const zone = m[7] as string;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const sign = digits[0] === '-' ? -1 : 1;
    ms -= sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * MINUTE;
  }
  const local = ms + offsetOfUtcDay(ms);
  return new Date(local).toISOString().slice(0, 10);
}

/** Offset at `utcMs`, from the cached offsets around its UTC day (no Intl call on most rows). */
function offsetOfUtcDay(utcMs: number): number {
  const day = offsetsAround(utcMs - (((utcMs % DAY) + DAY) % DAY));
  return utcMs < day.transition ? day.before : day.after;
}

let formattedDay = Number.NaN;
let formattedDate = '';

function formatUtc(ms: number): string {
  // The date part is formatted by toISOString (UTC whatever the host TZ) once per day; the time part
  // is plain arithmetic. Only the fraction is widened to microseconds.
  const day = Math.floor(ms / DAY);
  if (day !== formattedDay) {
    formattedDate = new Date(day * DAY).toISOString().slice(0, 10);
    formattedDay = day;
  }
  const seconds = Math.floor((ms - day * DAY) / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor(seconds / 60) % 60;
  const s = seconds % 60;
  return `${formattedDate}T${h < 10 ? '0' : ''}${h}:${m < 10 ? '0' : ''}${m}:${s < 10 ? '0' : ''}${s}.000000Z`;
}
