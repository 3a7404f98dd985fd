/**
 * ISO-8601 instants to the warehouse's canonical UTC form `YYYY-MM-DDTHH:MM:SS.ffffffZ`, kept to the
 * microsecond. The fraction is carried as text and never goes through `Date` (which holds only
 * milliseconds); only the whole seconds are shifted when an offset is given.
 */

import { calendarDay, utcSecondsOf } from './calendar.ts';

const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

export interface InstantOptions {
  /** When true, a value without `Z` or an offset is refused (ambiguous); otherwise it is read as UTC. */
  readonly requireZone?: boolean;
}

/**
 * Normalises an ISO-8601 instant to `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, six fraction digits).
 * Fractions of up to six digits are padded; seven to nine digits are accepted only when the digits
 * beyond the microsecond are zeros (nothing is rounded away silently).
 * @throws RangeError naming the value when it is not an ISO-8601 instant or does not exist.
 */
export function normaliseInstant(value: string, options: InstantOptions = {}): string {
  const m = ISO.exec(value);
  if (!m) throw new RangeError(`'${value}' is not an ISO-8601 date-time`);
  const [, date, hs, mis, ss, fraction = '', zone] = m as unknown as string[];
  let day;
  try {
    day = calendarDay(date as string);
  } catch {
    throw new RangeError(`'${value}' is not a date-time that exists`);
  }
  const h = Number(hs);
  const mi = Number(mis);
  const s = Number(ss);
  if (h > 23 || mi > 59 || s > 59) throw new RangeError(`'${value}' is not a date-time that exists`);
  if (fraction.length > 6 && !/^0+$/.test(fraction.slice(6))) {
    throw new RangeError(`'${value}' is more precise than a microsecond`);
  }
  if (zone === undefined && options.requireZone) {
    throw new RangeError(`'${value}' has no time zone (add Z or an offset such as -05:00)`);
  }
  const micros = fraction.length === 6 ? fraction : fraction.slice(0, 6).padEnd(6, '0');
  let offsetMinutes = 0;
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const digits = zone.replace(':', '');
    const sign = digits[0] === '-' ? -1 : 1;
    const offsetH = Number(digits.slice(1, 3));
    const offsetM = digits.length > 3 ? Number(digits.slice(3, 5)) : 0;
    if (offsetH > 23 || offsetM > 59) throw new RangeError(`'${value}' has an impossible offset`);
    offsetMinutes = sign * (offsetH * 60 + offsetM);
  }
  // Already UTC: the text is reassembled as it is, no arithmetic at all.
  if (offsetMinutes === 0) return `${day.iso}T${hs}:${mis}:${ss}.${micros}Z`;
  const ms = day.ms + ((h * 60 + mi) * 60 + s) * 1000 - offsetMinutes * 60_000;
  return `${utcSecondsOf(ms)}.${micros}Z`;
}
