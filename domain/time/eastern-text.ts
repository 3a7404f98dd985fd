/**
 * One way of showing an instant to a person: its Eastern (America/Toronto) wall-clock time to the
 * second, labelled EST or EDT, so that every page and table reads times the same way.
 */
import { utcSecondsOf } from './calendar.ts';
import { easternOffsetMs, easternWallClock } from './eastern.ts';
import { normaliseInstant } from './iso-instant.ts';

/**
 * `2026-03-20T12:00:00Z` → `2026-03-20 08:00:00 EDT`. Accepts what PostgreSQL sends for a timestamptz
 * (`2026-03-20 12:00:00.123+00`) as well as ISO-8601; a value that is not an instant comes back as it was.
 */
export function easternTimeText(instant: string): string {
  let utcMs: number;
  try {
    utcMs = Date.parse(normaliseInstant(instant));
  } catch {
    return instant;
  }
  if (!Number.isFinite(utcMs)) return instant;
  const { localMs } = easternWallClock(utcMs);
  const label = easternOffsetMs(utcMs) === -4 * 3_600_000 ? 'EDT' : 'EST';
  return `${utcSecondsOf(localMs).replace('T', ' ').slice(0, 19)} ${label}`;
}
