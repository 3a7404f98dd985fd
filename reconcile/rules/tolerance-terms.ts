import { sql } from 'kysely';
import type { RuleContext, RunTolerance, RunTolerances } from './statement.ts';
import { type Sql } from './sql-terms.ts';

/**
 * The account's tolerances (reconcile/tolerances/, docs/finance.md "Tolerances and write-offs") as
 * the rules state them: literals per currency in the statement, so that a run's SQL (and so the
 * matching fingerprint) says which tolerances it used, and so that a currency without one, or a run
 * without any, compares exactly as the rules always did.
 */

/** `case <currency> when 'CAD' then <value> … else <otherwise> end` over the currencies that have one. */
function byCurrency(
  tolerances: RunTolerances | undefined,
  currency: string,
  pick: (t: RunTolerance) => string | null,
  otherwise: string,
): string | null {
  const arms = (tolerances?.currencies ?? []).flatMap((t) => {
    const value = pick(t);
    return value === null ? [] : [`when '${t.currency}' then ${value}`];
  });
  return arms.length === 0 ? null : `(case ${currency} ${arms.join(' ')} else ${otherwise} end)`;
}

/**
 * `a` and `b` (cents of `currency`) differ by more than the amount tolerance. Without one it is
 * exactly `a <> b`; with one, `a <> b` stays first so that equal amounts never evaluate the rest.
 */
export function beyondTolerance(ctx: RuleContext, a: string, b: string, currency: string): string {
  const tolerance = byCurrency(
    ctx.tolerances,
    currency,
    (t) => (t.amountCents > 0 ? String(t.amountCents) : null),
    '0',
  );
  return tolerance === null ? `${a} <> ${b}` : `(${a} <> ${b} and abs(${a} - ${b}) > ${tolerance})`;
}

/** The write-off limit of `currency` in cents (0: none), for the run's write-offs. */
export function writeOffLimit(tolerances: RunTolerances | undefined, currency: string): string {
  return (
    byCurrency(
      tolerances,
      currency,
      (t) => (t.writeOffLimitCents > 0 ? String(t.writeOffLimitCents) : null),
      '0',
    ) ?? '0'
  );
}

/**
 * The last due Eastern date for rows of `currency`: the run's dueThrough, or earlier for a currency
 * with a date lag (its grace period is longer by the lag).
 */
export function dueThroughFor(ctx: RuleContext, currency: string): Sql {
  const lagged = byCurrency(
    ctx.tolerances,
    currency,
    (t) => (t.dateLagBusinessDays > 0 ? `date '${t.dueThrough}'` : null),
    'null',
  );
  return lagged === null
    ? sql`${ctx.dueThrough}::date`
    : sql`coalesce(${sql.raw(lagged)}, ${ctx.dueThrough}::date)`;
}
