import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { ReconError } from '../lib/errors.ts';

/** No discrepancy has this id. */
export class DiscrepancyNotFound extends ReconError {
  readonly retryable = false;
}

/**
 * Acknowledges a discrepancy with a note: status becomes acknowledged (unless it is already
 * resolved, which keeps its status) and an 'acknowledged' event records who, when and the note.
 * The note and acknowledgement survive later runs; a reopened discrepancy keeps them.
 */
export async function acknowledgeDiscrepancy(
  db: Kysely<Database>,
  req: { discrepancyId: number; note: string; by: string; at?: string },
): Promise<void> {
  const at = req.at ?? new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('discrepancies')
      .set((eb) => ({
        status: eb.case().when('resolved_at', 'is not', null).then('resolved').else('acknowledged').end(),
        acknowledged_at: at,
        acknowledged_by: req.by,
        note: req.note,
      }))
      .where('discrepancy_id', '=', req.discrepancyId)
      .returning('discrepancy_id')
      .executeTakeFirst();
    if (!row)
      throw new DiscrepancyNotFound(
        `discrepancy ${req.discrepancyId} does not exist: check the id with recon report --csv`,
      );
    await trx
      .insertInto('discrepancy_events')
      .values({
        discrepancy_id: req.discrepancyId,
        event: 'acknowledged',
        details: JSON.stringify({ by: req.by, note: req.note }),
        at,
      })
      .execute();
  });
}
