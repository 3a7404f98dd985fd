/**
 * Eastern wall clock for writing the provider's formats, on instants in microseconds since the epoch
 * (a safe integer until the year 2255), so that the report's microsecond timestamps survive. The
 * zone's rules are those of domain/time/eastern.ts, the zone database's, so history before the 2007
 * rules is written as it happened.
 */

import { dateOfEpochDay, DAY_MS } from '../../domain/time/calendar.ts';
import { easternWallClock } from '../../domain/time/eastern.ts';

const HOUR_US = 3_600_000_000;

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

/** Eastern wall-clock date and time of an instant (seconds truncated). */
export function easternWallTime(utcUs: number): EasternWallTime {
  const { localMs, fold } = easternWallClock(Math.floor(utcUs / 1000));
  const day = Math.floor(localMs / DAY_MS);
  const date = dateOfEpochDay(day);
  const seconds = Math.floor((localMs - day * DAY_MS) / 1000);
  const time = `${two(Math.floor(seconds / 3600))}${two(Math.floor(seconds / 60) % 60)}${two(seconds % 60)}`;
  return { date, compactDate: date.replaceAll('-', ''), time, fold };
}

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);

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
