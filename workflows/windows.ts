/**
 * Calendar arithmetic on Eastern days ('YYYY-MM-DD'), pure and deterministic so that workflows can use
 * it. A window is a range of whole Eastern calendar days, both ends inclusive: the provider's reports
 * and the legacy query interface are asked per Eastern day, and daylight saving only changes how many
 * hours a day has, never which days a window holds (the UTC instants are computed at the edge, by
 * the pull, from these dates).
 */

/** The legacy query interface refuses more than 40 days a query (provider-api.md, section 8). */
export const MAX_WINDOW_DAYS = 40;

const MS_PER_DAY = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** One window: Eastern days `from`..`to`, both inclusive. */
export interface DayWindow {
  readonly from: string;
  readonly to: string;
}

/** Days since 1970-01-01 of a valid 'YYYY-MM-DD', or null when the text is not a real calendar date. */
function epochDay(day: string): number | null {
  const m = ISO_DATE.exec(day);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to March: a round trip that changes the day means "not a date".
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return ms / MS_PER_DAY;
}

function fromEpochDay(n: number): string {
  return new Date(n * MS_PER_DAY).toISOString().slice(0, 10);
}

/** Whether `day` is a real calendar date written 'YYYY-MM-DD'. */
export function isIsoDate(day: string): boolean {
  return epochDay(day) !== null;
}

function mustEpochDay(day: string, what: string): number {
  const n = epochDay(day);
  if (n === null) throw new RangeError(`${what} ${JSON.stringify(day)} is not a date: write it YYYY-MM-DD`);
  return n;
}

/** `day` moved by `n` calendar days (negative goes back). */
export function addDays(day: string, n: number): string {
  return fromEpochDay(mustEpochDay(day, 'day') + n);
}

/** Number of days in `from`..`to`, both inclusive (1 when from = to). */
export function daysInclusive(from: string, to: string): number {
  return mustEpochDay(to, 'to') - mustEpochDay(from, 'from') + 1;
}

/**
 * Splits Eastern days `from`..`to` (inclusive) into consecutive windows of at most `maxDays` days,
 * the last one shorter when the range does not divide evenly. Throws a RangeError naming the problem
 * when a date is malformed, `from` is after `to`, or `maxDays` is outside 1..40.
 */
export function splitWindows(from: string, to: string, maxDays: number = MAX_WINDOW_DAYS): DayWindow[] {
  const start = mustEpochDay(from, 'from');
  const end = mustEpochDay(to, 'to');
  if (start > end) throw new RangeError(`from ${from} is after to ${to}: give the earlier date first`);
  if (!Number.isInteger(maxDays) || maxDays < 1 || maxDays > MAX_WINDOW_DAYS) {
    throw new RangeError(`window size ${maxDays} is not valid: use a whole number of days from 1 to 40`);
  }
  const windows: DayWindow[] = [];
  for (let first = start; first <= end; first += maxDays) {
    windows.push({ from: fromEpochDay(first), to: fromEpochDay(Math.min(first + maxDays - 1, end)) });
  }
  return windows;
}

/**
 * Workflow id of a backfill: derived from the range (and the account, for a backfill of one
 * account), so starting the same backfill again finds it.
 */
export function backfillWorkflowId(from: string, to: string, account?: string): string {
  return account === undefined ? `backfill-${from}-${to}` : `backfill-${account}-${from}-${to}`;
}

/**
 * Workflow id of a window: derived from the window and its account, so the same window of one
 * account never runs twice at once (a window without account is that of runs recorded before
 * accounts existed).
 */
export function windowWorkflowId(window: DayWindow & { readonly account?: string }): string {
  return window.account === undefined
    ? `window-${window.from}-${window.to}`
    : `window-${window.account}-${window.from}-${window.to}`;
}

const easternDate = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Toronto',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/**
 * The Eastern (America/Toronto) calendar day of a UTC instant, 'YYYY-MM-DD'. Used by the nightly
 * workflow on the schedule's own scheduled time; the time-zone rules come with the Node binary, so a
 * replay on the same worker build gives the same answer.
 */
export function easternDayOf(instant: Date): string {
  const parts = Object.fromEntries(easternDate.formatToParts(instant).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}`;
}
