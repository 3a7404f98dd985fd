import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { ReconError } from '../domain/errors.ts';

/** No discrepancy has this id. */
export class DiscrepancyNotFound extends ReconError {
  readonly retryable = false;
}

/** An acknowledgement without a note or without who: it would explain nothing. */
export class InvalidAcknowledgement extends ReconError {
  readonly retryable = false;
}

/**
 * Acknowledges a discrepancy with a note: status becomes acknowledged (unless it is already
 * resolved, which keeps its status) and an 'acknowledged' event records who, when and the note.
 * The note and acknowledgement survive later runs; a reopened discrepancy keeps them. Acknowledging
 * again replaces the note on the discrepancy, and the new event keeps the earlier acknowledgement
 * (`details.previous`: by, note, at), so no note is ever lost.
 * @throws InvalidAcknowledgement for an empty note or name; DiscrepancyNotFound for an unknown id.
 */
export async function acknowledgeDiscrepancy(
  db: Kysely<Database>,
  req: { discrepancyId: number; note: string; by: string; at?: string },
): Promise<void> {
  const note = req.note.trim();
  const by = req.by.trim();
  if (note === '' || by === '') {
    throw new InvalidAcknowledgement(
      `discrepancy ${req.discrepancyId}: an acknowledgement needs a non-empty ${note === '' ? 'note' : 'name (by)'}: say why and who`,
    );
  }
  const at = req.at ?? new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    const earlier = await trx
      .selectFrom('discrepancies')
      .select(['acknowledged_at', 'acknowledged_by', 'note'])
      .where('discrepancy_id', '=', req.discrepancyId)
      .forUpdate()
      .executeTakeFirst();
    const row = await trx
      .updateTable('discrepancies')
      .set((eb) => ({
        status: eb.case().when('resolved_at', 'is not', null).then('resolved').else('acknowledged').end(),
        acknowledged_at: at,
        acknowledged_by: by,
        note,
      }))
      .where('discrepancy_id', '=', req.discrepancyId)
      .returning('discrepancy_id')
      .executeTakeFirst();
    if (!row)
      throw new DiscrepancyNotFound(
        `discrepancy ${req.discrepancyId} does not exist: check the id with recon discrepancies list`,
      );
    await trx
      .insertInto('discrepancy_events')
      .values({
        discrepancy_id: req.discrepancyId,
        event: 'acknowledged',
        // The workbench's timeline names who acted; from the terminal that is --by.
        actor: by,
        details: JSON.stringify({
          by,
          note,
          ...(earlier?.acknowledged_at
            ? { previous: { by: earlier.acknowledged_by, note: earlier.note, at: earlier.acknowledged_at } }
            : {}),
        }),
        at,
      })
      .execute();
  });
}
