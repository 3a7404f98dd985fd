/**
 * What a person does to a discrepancy, from the terminal or the workbench: acknowledge, assign,
 * comment, resolve with a reason, reopen; one at a time or in bulk. One set of rules for every caller:
 * - an acknowledgement needs a non-empty note and a name; it keeps a resolved discrepancy resolved,
 *   and its event keeps the earlier acknowledgement (`details.previous`: by, note, at), so no note is
 *   ever lost;
 * - a comment needs a non-empty text; an assignee must be an enabled workbench user;
 * - resolving a resolved discrepancy, or reopening an unresolved one, is a conflict;
 * - a discrepancy outside the caller's account scope is not found.
 * Each action is one transaction that locks the row, changes it and adds a discrepancy_events row
 * naming the actor, so concurrent actions on one discrepancy all land, in some order. Reconcile runs
 * never clear what these set (apply-findings.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { typedError } from '../../domain/errors.ts';
import { filterCondition, scopeCondition, type AccountScope, type DiscrepancyFilter } from './filter.ts';
import { DiscrepancyNotFound } from './row.ts';

export const RESOLUTIONS = ['accepted', 'fixed_in_ledger', 'provider_error'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export type Action =
  | { action: 'ack'; note: string }
  | { action: 'assign'; user: string | null }
  | { action: 'comment'; text: string }
  | { action: 'resolve'; reason: Resolution; note: string }
  | { action: 'reopen'; note: string };

/** An action its rules refuse as given (an acknowledgement without a note, an empty comment, ...). */
export class InvalidAction extends typedError('final') {}

/** The action does not apply to the discrepancy as it is now (resolve a resolved one, ...). */
export class ActionConflict extends typedError('final') {}

/** An assignee that is not an enabled workbench user. */
export class UnknownAssignee extends typedError('final') {}

/** Who acts, when (default: the database's now), and which accounts they may act on. */
export interface Actor {
  readonly name: string;
  readonly at?: string;
  readonly accounts?: AccountScope;
}

/** The action with its texts trimmed, or InvalidAction; the one place the rules on texts are checked. */
function checked<A extends Action>(act: A, actor: Actor, what: string): A {
  if (actor.name.trim() === '') throw new InvalidAction(`${what}: an action needs a name (by): say who`);
  if (act.action === 'ack') {
    const note = act.note.trim();
    if (note === '')
      throw new InvalidAction(`${what}: an acknowledgement needs a non-empty note: say why and who`);
    return { ...act, note };
  }
  if (act.action === 'comment') {
    const text = act.text.trim();
    if (text === '') throw new InvalidAction(`${what}: a comment needs a non-empty text`);
    return { ...act, text };
  }
  return act;
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

const at = (actor: Actor) => sql`coalesce(${actor.at ?? null}::timestamptz, now())`;

/** The acknowledgement's event details: who, the note, and the acknowledgement it replaces. */
const ACK_DETAILS = (by: string, note: string, bulk: boolean) => sql`jsonb_strip_nulls(jsonb_build_object(
    'by', ${by}::text, 'note', ${note}::text, 'bulk', ${bulk ? true : null}::boolean,
    'previous', case when d.acknowledged_at is not null then jsonb_build_object(
      'by', d.acknowledged_by, 'note', d.note, 'at', d.acknowledged_at) end))`;

/** Applies one action to one discrepancy; returns the new event's id. */
export async function actOnDiscrepancy(
  db: Kysely<Database>,
  id: number,
  action: Action,
  actor: Actor,
): Promise<{ event_id: number }> {
  const act = checked(action, actor, `discrepancy ${id}`);
  if (act.action === 'assign') await checkAssignee(db, act.user);
  return db.transaction().execute(async (trx) => {
    const d = (
      await sql<{ resolved_at: string | null; assignee: string | null }>`select resolved_at, assignee
        from discrepancies where discrepancy_id = ${id} and ${scopeCondition(actor.accounts)}
        for update`.execute(trx)
    ).rows[0];
    if (!d) throw new DiscrepancyNotFound(id);
    const event = async (name: string, details: unknown) =>
      (
        await sql<{
          event_id: number;
        }>`insert into discrepancy_events (discrepancy_id, event, details, actor, at)
          values (${id}, ${name}, ${details}::jsonb, ${actor.name}, ${at(actor)}) returning event_id`.execute(
          trx,
        )
      ).rows[0]!;
    switch (act.action) {
      case 'ack': {
        // The event first: it reads the earlier acknowledgement that the update replaces.
        const row = (
          await sql<{
            event_id: number;
          }>`insert into discrepancy_events (discrepancy_id, event, details, actor, at)
            select d.discrepancy_id, 'acknowledged', ${ACK_DETAILS(actor.name, act.note, false)}, ${actor.name}, ${at(actor)}
            from discrepancies d where d.discrepancy_id = ${id} returning event_id`.execute(trx)
        ).rows[0]!;
        await sql`update discrepancies set acknowledged_at = ${at(actor)}, acknowledged_by = ${actor.name},
            note = ${act.note}, status = case when resolved_at is null then 'acknowledged' else status end
          where discrepancy_id = ${id}`.execute(trx);
        return row;
      }
      case 'assign':
        await sql`update discrepancies set assignee = ${act.user} where discrepancy_id = ${id}`.execute(trx);
        return event('assigned', JSON.stringify({ assignee: act.user, previous: d.assignee }));
      case 'comment':
        return event('commented', JSON.stringify({ text: act.text }));
      case 'resolve':
        if (d.resolved_at !== null)
          throw new ActionConflict(
            `discrepancy ${id} is already resolved: reopen it first to resolve it again`,
          );
        await sql`update discrepancies set resolved_at = ${at(actor)}, status = 'resolved', resolution = ${act.reason},
            resolved_by = ${actor.name} where discrepancy_id = ${id}`.execute(trx);
        return event('resolved', JSON.stringify({ reason: act.reason, note: act.note }));
      case 'reopen':
        if (d.resolved_at === null)
          throw new ActionConflict(`discrepancy ${id} is not resolved: nothing to reopen`);
        await sql`update discrepancies set resolved_at = null, resolution = null, resolved_by = null,
            status = case when acknowledged_at is null then 'open' else 'acknowledged' end
          where discrepancy_id = ${id}`.execute(trx);
        return event('reopened', JSON.stringify({ note: act.note }));
    }
  });
}

/** The most discrepancies one bulk action changes; a larger selection is refused, not cut. */
export const BULK_LIMIT = 10_000;

/**
 * Acknowledges or assigns every unresolved discrepancy of `ids` or of a filter (both within the
 * actor's account scope), in one transaction, one event each, by the same rules as one at a time.
 * Throws {@link ActionConflict} when more than {@link BULK_LIMIT} match.
 */
export async function bulkAct(
  db: Kysely<Database>,
  selection: { ids: number[] } | { filter: DiscrepancyFilter },
  action: { action: 'ack'; note: string } | { action: 'assign'; user: string | null },
  actor: Actor,
): Promise<{ count: number }> {
  const act = checked(action, actor, 'bulk');
  if (act.action === 'assign') await checkAssignee(db, act.user);
  const where =
    'ids' in selection
      ? sql`discrepancy_id = any(${selection.ids}::bigint[])`
      : filterCondition(selection.filter);
  return db.transaction().execute(async (trx) => {
    const locked = await sql<{ discrepancy_id: number }>`
      select discrepancy_id from discrepancies
      where ${where} and ${scopeCondition(actor.accounts)} and resolved_at is null
      order by discrepancy_id limit ${BULK_LIMIT + 1} for update`.execute(trx);
    if (locked.rows.length > BULK_LIMIT)
      throw new ActionConflict(
        `the selection has more than ${BULK_LIMIT} unresolved discrepancies: narrow the filter`,
      );
    const ids = locked.rows.map((r) => r.discrepancy_id);
    if (ids.length === 0) return { count: 0 };
    const events =
      act.action === 'ack'
        ? sql`select d.discrepancy_id, 'acknowledged', ${ACK_DETAILS(actor.name, act.note, true)}`
        : sql`select d.discrepancy_id, 'assigned', jsonb_build_object('assignee', ${act.user}::text,
            'previous', d.assignee, 'bulk', true)`;
    await sql`insert into discrepancy_events (discrepancy_id, event, details, actor, at)
      ${events}, ${actor.name}, ${at(actor)}
      from discrepancies d where d.discrepancy_id = any(${ids}::bigint[])`.execute(trx);
    if (act.action === 'ack')
      await sql`update discrepancies set acknowledged_at = ${at(actor)}, acknowledged_by = ${actor.name},
          note = ${act.note}, status = 'acknowledged' where discrepancy_id = any(${ids}::bigint[])`.execute(
        trx,
      );
    else
      await sql`update discrepancies set assignee = ${act.user}
        where discrepancy_id = any(${ids}::bigint[])`.execute(trx);
    return { count: ids.length };
  });
}
