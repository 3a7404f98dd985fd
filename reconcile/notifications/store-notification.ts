import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { redactPersonal } from '../../lib/privacy.ts';
import type { NormalisedNotification } from './normalise-notification.ts';

export interface StoredNotification {
  readonly notificationId: number;
  /** False when this body had been stored before (the delivery was counted, not stored again). */
  readonly inserted: boolean;
  readonly deliveryCount: number;
}

/**
 * Writes one notification, keyed by its delivery_key: a repeated delivery increments delivery_count
 * and moves last_received_at (received_at keeps the earliest delivery). With `replay` (history
 * imports), a delivery whose received_at equals one already recorded is not counted again, so that
 * importing the same export twice changes nothing. Commits on its own when given the database.
 */
export async function storeNotification(
  db: Db,
  n: NormalisedNotification,
  options: { receivedAt?: string; replay?: boolean } = {},
): Promise<StoredNotification> {
  const receivedAt = options.receivedAt ?? null;
  const countIt = options.replay
    ? sql<number>`case when excluded.received_at in (notifications.received_at, notifications.last_received_at)
        then notifications.delivery_count else notifications.delivery_count + 1 end`
    : sql<number>`notifications.delivery_count + 1`;
  const row = await db
    .insertInto('notifications')
    .values({
      ...n,
      payload: JSON.stringify(n.payload),
      received_at: receivedAt ?? sql<string>`clock_timestamp()`,
      last_received_at: receivedAt ?? sql<string>`clock_timestamp()`,
    })
    .onConflict((oc) =>
      oc.column('delivery_key').doUpdateSet({
        delivery_count: countIt,
        received_at: sql<string>`least(notifications.received_at, excluded.received_at)`,
        last_received_at: sql<string>`greatest(notifications.last_received_at, excluded.last_received_at)`,
      }),
    )
    .returning(['notification_id', 'delivery_count', sql<boolean>`(xmax = 0)`.as('inserted')])
    .executeTakeFirstOrThrow();
  return { notificationId: row.notification_id, inserted: row.inserted, deliveryCount: row.delivery_count };
}

/**
 * Keeps a refused body with the reason, so that nothing the provider sent is lost. The reason is
 * redacted (analysts read it); the body is personal data, for the pipeline's role only.
 */
export async function quarantineNotification(
  db: Db,
  q: {
    kind: string;
    reason: string;
    body: string;
    contentType?: string | null;
    remoteAddress?: string | null;
    receivedAt?: string;
  },
): Promise<number> {
  const row = await db
    .insertInto('notification_quarantine')
    .values({
      kind: q.kind,
      reason: redactPersonal(q.reason),
      body: q.body,
      content_type: q.contentType ?? null,
      remote_address: q.remoteAddress ?? null,
      ...(q.receivedAt ? { received_at: q.receivedAt } : {}),
    })
    .returning('quarantine_id')
    .executeTakeFirstOrThrow();
  return row.quarantine_id;
}
