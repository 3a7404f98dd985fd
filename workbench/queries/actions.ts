/**
 * What a person does to a discrepancy from the workbench: acknowledge, assign, comment, resolve with
 * a reason, reopen; one at a time or in bulk. Each action is one transaction that locks the row,
 * changes it and adds a discrepancy_events row naming the actor, so concurrent actions on one
 * discrepancy all land, in some order. Reconcile runs never clear what these set (apply-findings.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { ReconError } from '../../domain/errors.ts';
import { filterCondition, type WorklistFilter } from './worklist.ts';

export const RESOLUTIONS = ['accepted', 'fixed_in_ledger', 'provider_error'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export type Action =
  | { action: 'ack'; note: string }
  | { action: 'assign'; user: string | null }
  | { action: 'comment'; text: string }
  | { action: 'resolve'; reason: Resolution; note: string }
  | { action: 'reopen'; note: string };

export class DiscrepancyMissing extends ReconError {
  readonly retryable = false;
}

/** The action does not apply to the discrepancy as it is now (resolve a resolved one, ...). */
export class ActionConflict extends ReconError {
  readonly retryable = false;
}

/** An assignee that is not an enabled workbench user. */
export class UnknownAssignee extends ReconError {
  readonly retryable = false;
}

async function checkAssignee(db: Kysely<Database>, user: string | null): Promise<void> {
  if (user === null) return;
  const row = await db
    .selectFrom('workbench_users')
    .select('username')
    .where('username', '=', user)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row)
    throw new UnknownAssignee(
      `cannot assign to ${JSON.stringify(user)}: no enabled workbench user has that name`,
    );
}

/** Applies one action to one discrepancy; returns the new event's id. */
export async function actOnDiscrepancy(
  db: Kysely<Database>,
  id: number,
  act: Action,
  actor: string,
): Promise<{ event_id: number }> {
  if (act.action === 'assign') await checkAssignee(db, act.user);
  return db.transaction().execute(async (trx) => {
    const d = await trx
      .selectFrom('discrepancies')
      .select(['discrepancy_id', 'resolved_at', 'assignee', 'status'])
      .where('discrepancy_id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!d) throw new DiscrepancyMissing(`discrepancy ${id} does not exist: check the id in the worklist`);
    let event: 'acknowledged' | 'assigned' | 'commented' | 'resolved' | 'reopened';
    let details: Record<string, unknown>;
    switch (act.action) {
      case 'ack':
        await sql`update discrepancies set acknowledged_at = now(), acknowledged_by = ${actor}, note = ${act.note},
            status = case when resolved_at is null then 'acknowledged' else status end
          where discrepancy_id = ${id}`.execute(trx);
        event = 'acknowledged';
        details = { by: actor, note: act.note };
        break;
      case 'assign':
        await trx
          .updateTable('discrepancies')
          .set({ assignee: act.user })
          .where('discrepancy_id', '=', id)
          .execute();
        event = 'assigned';
        details = { assignee: act.user, previous: d.assignee };
        break;
      case 'comment':
        event = 'commented';
        details = { text: act.text };
        break;
      case 'resolve':
        if (d.resolved_at !== null)
          throw new ActionConflict(
            `discrepancy ${id} is already resolved: reopen it first to resolve it again`,
          );
        await sql`update discrepancies set resolved_at = now(), status = 'resolved', resolution = ${act.reason},
            resolved_by = ${actor} where discrepancy_id = ${id}`.execute(trx);
        event = 'resolved';
        details = { reason: act.reason, note: act.note };
        break;
      case 'reopen':
        if (d.resolved_at === null)
          throw new ActionConflict(`discrepancy ${id} is not resolved: nothing to reopen`);
        await sql`update discrepancies set resolved_at = null, resolution = null, resolved_by = null,
            status = case when acknowledged_at is null then 'open' else 'acknowledged' end
          where discrepancy_id = ${id}`.execute(trx);
        event = 'reopened';
        details = { note: act.note };
        break;
    }
    return trx
      .insertInto('discrepancy_events')
      .values({ discrepancy_id: id, event, details: JSON.stringify(details), actor })
      .returning('event_id')
      .executeTakeFirstOrThrow();
  });
}

/** The most discrepancies one bulk action changes; a larger selection is refused, not cut. */
export const BULK_LIMIT = 10_000;

/**
 * Acknowledges or assigns every unresolved discrepancy of `ids` or of a filter, in one
 * transaction, one event each. Throws {@link ActionConflict} when more than {@link BULK_LIMIT} match.
 */
export async function bulkAct(
  db: Kysely<Database>,
  selection: { ids: number[] } | { filter: WorklistFilter },
  act: { action: 'ack'; note: string } | { action: 'assign'; user: string | null },
  actor: string,
): Promise<{ count: number }> {
  if (act.action === 'assign') await checkAssignee(db, act.user);
  const where =
    'ids' in selection
      ? sql`discrepancy_id = any(${selection.ids}::bigint[]) and resolved_at is null`
      : sql`${filterCondition(selection.filter)} and resolved_at is null`;
  return db.transaction().execute(async (trx) => {
    const locked = await sql<{ discrepancy_id: number; assignee: string | null }>`
      select discrepancy_id, assignee from discrepancies where ${where}
      order by discrepancy_id limit ${BULK_LIMIT + 1} for update`.execute(trx);
    if (locked.rows.length > BULK_LIMIT)
      throw new ActionConflict(
        `the selection has more than ${BULK_LIMIT} unresolved discrepancies: narrow the filter`,
      );
    const ids = locked.rows.map((r) => r.discrepancy_id);
    if (ids.length === 0) return { count: 0 };
    if (act.action === 'ack') {
      await sql`update discrepancies set acknowledged_at = now(), acknowledged_by = ${actor}, note = ${act.note},
          status = 'acknowledged' where discrepancy_id = any(${ids}::bigint[])`.execute(trx);
      await sql`insert into discrepancy_events (discrepancy_id, event, details, actor)
        select id, 'acknowledged', ${JSON.stringify({ by: actor, note: act.note, bulk: true })}::jsonb, ${actor}
        from unnest(${ids}::bigint[]) as id`.execute(trx);
    } else {
      await sql`update discrepancies set assignee = ${act.user} where discrepancy_id = any(${ids}::bigint[])`.execute(
        trx,
      );
      await sql`insert into discrepancy_events (discrepancy_id, event, details, actor)
        select r.id, 'assigned', jsonb_build_object('assignee', ${act.user}::text, 'previous', r.previous, 'bulk', true), ${actor}
        from unnest(${ids}::bigint[], ${locked.rows.map((r) => r.assignee)}::text[]) as r(id, previous)`.execute(
        trx,
      );
    }
    return { count: ids.length };
  });
}
