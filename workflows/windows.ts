/**
 * Calendar arithmetic on Eastern days ('YYYY-MM-DD'), pure and deterministic so that workflows can use
 * it. A window is a range of whole Eastern calendar days, both ends inclusive: the provider's reports
 * and the legacy query interface are asked per Eastern day, and daylight saving only changes how many
 * hours a day has, never which days a window holds (the UTC instants are computed at the edge, by
 * the pull, from these dates).
 */

import { ApplicationFailure } from '@temporalio/common';
import { MAX_WINDOW_DAYS } from '../domain/sources.ts';
import { dateOfEpochDay, epochDay } from '../domain/time/calendar.ts';
import { checkDateWindow, InvalidDateWindow } from '../domain/time/date-window.ts';

/** One window: Eastern days `from`..`to`, both inclusive. */
export type { DayWindow } from '../domain/run-summary.ts';
import type { DayWindow } from '../domain/run-summary.ts';

/**
 * Splits Eastern days `from`..`to` (inclusive) into consecutive windows of at most `maxDays` days,
 * the last one shorter when the range does not divide evenly. Throws InvalidDateWindow naming the problem
 * when a date is malformed, `from` is after `to`, or `maxDays` is outside 1..40.
 */
export function splitWindows(from: string, to: string, maxDays: number = MAX_WINDOW_DAYS): DayWindow[] {
  checkDateWindow(from, to, (problem) =>
    problem === 'reversed'
      ? `from ${from} is after to ${to}: give the earlier date first`
      : `${problem.end} ${JSON.stringify(problem.value)} is not a date: write it YYYY-MM-DD`,
  );
  const start = epochDay(from);
  const end = epochDay(to);
  if (!Number.isInteger(maxDays) || maxDays < 1 || maxDays > MAX_WINDOW_DAYS) {
    throw new InvalidDateWindow(
      `window size ${maxDays} is not valid: use a whole number of days from 1 to ${MAX_WINDOW_DAYS}`,
    );
  }
  const windows: DayWindow[] = [];
  for (let first = start; first <= end; first += maxDays) {
    windows.push({ from: dateOfEpochDay(first), to: dateOfEpochDay(Math.min(first + maxDays - 1, end)) });
  }
  return windows;
}

/**
 * `check()`, with the one date-window error a workflow's input can raise (InvalidDateWindow) turned
 * into the run's failure of that type, not retried: a backfill's range and a nightly's day fail the
 * same way as the command line and the activities refuse them.
 */
export function checkedWindowInput<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof InvalidDateWindow)
      throw ApplicationFailure.nonRetryable(error.message, 'InvalidDateWindow');
    throw error;
  }
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

/**
 * The dates as ranges of consecutive days, each of at most `maxDays` days, in order: the follow-up
 * reconciles again exactly the days it changed, in as few runs as the dates allow.
 */
export function rangesOfDates(dates: readonly string[], maxDays: number = MAX_WINDOW_DAYS): DayWindow[] {
  const days = [
    ...new Set(
      dates.map((d) => {
        checkDateWindow(d, d, () => `date ${JSON.stringify(d)} is not a date: write it YYYY-MM-DD`);
        return epochDay(d);
      }),
    ),
  ].sort((a, b) => a - b);
  const ranges: DayWindow[] = [];
  let first: number | undefined;
  let last = 0;
  for (const day of days) {
    if (first !== undefined && day === last + 1 && day - first < maxDays) {
      last = day;
      continue;
    }
    if (first !== undefined) ranges.push({ from: dateOfEpochDay(first), to: dateOfEpochDay(last) });
    first = last = day;
  }
  if (first !== undefined) ranges.push({ from: dateOfEpochDay(first), to: dateOfEpochDay(last) });
  return ranges;
}
