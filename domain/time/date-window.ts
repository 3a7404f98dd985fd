/**
 * A window of Eastern business dates, from..to, both inclusive, written YYYY-MM-DD. One check for
 * every edge that takes one (the command line, a pull, a reconcile run, the workflows' own re-checks
 * of their inputs) and one error type; each edge words the problem with its own names for the ends
 * (`--from`, `from`, `reconcile range`), which is all that differs.
 */
import { UsageError } from '../errors.ts';
import { isValidDate } from './calendar.ts';

/** What is wrong with a window: an end that is not a date, or the ends in the wrong order. */
export type DateWindowProblem = { readonly end: 'from' | 'to'; readonly value: string } | 'reversed';

/** The window's problem, or null when both ends are dates that exist and from <= to. */
export function dateWindowProblem(from: string, to: string): DateWindowProblem | null {
  if (!isValidDate(from)) return { end: 'from', value: from };
  if (!isValidDate(to)) return { end: 'to', value: to };
  return from > to ? 'reversed' : null;
}

/**
 * A window that is not one (see {@link dateWindowProblem}), or one a caller cannot take (too long).
 * A usage error: not retryable, and the command line exits 2.
 */
export class InvalidDateWindow extends UsageError {}

/**
 * Throws {@link InvalidDateWindow} with `describe(problem)` as its message when the window has a
 * problem; `describe` words it for the caller's audience.
 */
export function checkDateWindow(
  from: string,
  to: string,
  describe: (problem: DateWindowProblem) => string,
): void {
  const problem = dateWindowProblem(from, to);
  if (problem !== null) throw new InvalidDateWindow(describe(problem));
}
