/**
 * Write-offs (migration 0026, table `write_offs`: write_off_id, account, currency, amount_cents,
 * reason, kind, business_date, discrepancy_id, manual_match_id, run_id, tolerance_version,
 * reversal_of, written_off_by, written_off_at). Every difference written off is a row, whoever did
 * it: a reconcile run (written_off_by 'recon') or a person. Insert-only: an undo is a reversing row
 * (the opposite amount, reversal_of naming the row it undoes), so that the month's totals stay true.
 */
import type { Database, Db } from '../../db/database.ts';
import { snakeCased, type FieldNamed } from '../../domain/snake-cased.ts';
import { InvalidTolerance } from './tolerance.ts';

/** Who a reconcile run's automatic write-offs are by. */
export const RECON_ACTOR = 'recon';

export interface WriteOff {
  readonly account: string;
  readonly currency: string;
  /** Signed as discrepancies.difference_cents: the other side minus the expected one. */
  readonly amountCents: number;
  /** Required: why, in words. */
  readonly reason: string;
  readonly writtenOffBy: string;
  readonly kind?: string | null;
  readonly businessDate?: string | null;
  readonly discrepancyId?: number | null;
  readonly manualMatchId?: number | null;
  readonly runId?: number | null;
  readonly toleranceVersion?: number | null;
  readonly reversalOf?: number | null;
  /** When (ISO); now by default. */
  readonly at?: string;
}

/** The fields of a write-off that are its columns, under the same names in snake_case (checked). */
const WRITE_OFF_COLUMNS = [
  'account',
  'currency',
  'amountCents',
  'reason',
  'kind',
  'businessDate',
  'discrepancyId',
  'manualMatchId',
  'runId',
  'toleranceVersion',
  'reversalOf',
  'writtenOffBy',
] as const satisfies readonly FieldNamed<WriteOff, keyof Database['write_offs']>[];

/**
 * Records one write-off in the caller's transaction and returns its id. Never updates a row.
 *
 * @example
 *   const id = await recordWriteOff(trx, { account, currency: 'CAD', amountCents: -1,
 *     reason: 'fee one cent under the schedule', writtenOffBy: 'ann', manualMatchId: 12 });
 */
export async function recordWriteOff(trx: Db, w: WriteOff): Promise<number> {
  if (!Number.isSafeInteger(w.amountCents))
    throw new InvalidTolerance(`write-off of ${String(w.amountCents)} cents: give whole cents`);
  if (w.reason.trim() === '') throw new InvalidTolerance('a write-off needs a reason: say why in words');
  const row = await trx
    .insertInto('write_offs')
    .values({ ...snakeCased(w, WRITE_OFF_COLUMNS), ...(w.at ? { written_off_at: w.at } : {}) })
    .returning('write_off_id')
    .executeTakeFirstOrThrow();
  return row.write_off_id;
}
