import type { Db } from '../../db/database.ts';
import type { RunTolerances } from '../rules/statement.ts';
import { loadTolerances, type Tolerances } from './tolerance.ts';

/**
 * The tolerances a run matches with: the account's latest (or `given`, a proposal being previewed),
 * each currency with its due date for the date lag (`dueFor(lag)`: the last Eastern date due at the
 * run's instant when the grace period is longer by `lag` business days).
 */
export async function runTolerances(
  db: Db,
  account: string,
  dueFor: (lagBusinessDays: number) => string,
  given?: Tolerances,
): Promise<RunTolerances> {
  const t = given ?? (await loadTolerances(db, account));
  return {
    version: t.version,
    currencies: t.currencies.map((c) => ({ ...c, dueThrough: dueFor(c.dateLagBusinessDays) })),
  };
}
