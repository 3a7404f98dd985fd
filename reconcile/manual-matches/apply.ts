/**
 * A manual match or its undo, committed, then the run of its items' dates: the discrepancies it
 * closes resolve (an undo: reopen) through the lifecycle of that run, as the nightly would do it.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { reconcileRange } from '../reconcile-range.ts';
import {
  addManualMatch,
  undoManualMatch,
  type MatchActor,
  type MatchRequest,
  type RecordedMatch,
} from './record.ts';

export interface AppliedMatch extends RecordedMatch {
  /** The reconcile run of the items' dates that followed. */
  readonly runId: number;
}

/** Reconciles the business dates of a match's items (from..to) for its account. */
export async function reconcileMatchDates(db: Kysely<Database>, m: RecordedMatch): Promise<number> {
  const summary = await reconcileRange(db, { account: m.account, from: m.from, to: m.to });
  return summary.runId;
}

/**
 * Records the match (one transaction), then reconciles its dates. The match holds once recorded: a
 * run that fails afterwards leaves it for the next run of those dates to apply.
 */
export async function matchItems(
  db: Kysely<Database>,
  req: MatchRequest,
  actor: MatchActor,
): Promise<AppliedMatch> {
  const m = await db.transaction().execute((trx) => addManualMatch(trx, req, actor));
  return { ...m, runId: await reconcileMatchDates(db, m) };
}

/** Undoes the match (one transaction), then reconciles its dates. */
export async function undoMatch(
  db: Kysely<Database>,
  matchId: number,
  note: string,
  actor: Omit<MatchActor, 'mayWriteOff'>,
): Promise<AppliedMatch> {
  const m = await db.transaction().execute((trx) => undoManualMatch(trx, matchId, note, actor));
  return { ...m, runId: await reconcileMatchDates(db, m) };
}
