import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { redactPersonal } from '../../domain/privacy.ts';
import { LONE_SURROGATE, type NormalisedNotification } from './normalise-notification.ts';
import { DEFAULT_ACCOUNT } from '../../domain/account-name.ts';

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
      oc.columns(['account', 'delivery_key']).doUpdateSet({
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
 * Writes several deliveries in ONE statement (so one commit: the receiver's group commit). Identical
 * bodies of the batch are counted together on one row. Rows go in delivery_key order, so that two
 * batches in flight at once take their row locks in the same order and cannot deadlock. Returns one
 * result per input, in input order: the first delivery of a new body is `inserted`, the rest are not.
 */
export async function storeNotificationBatch(
  db: Db,
  items: readonly NormalisedNotification[],
): Promise<StoredNotification[]> {
  if (items.length === 0) return [];
  const counts = new Map<string, { n: NormalisedNotification; count: number }>();
  const keyOf = (account: string | undefined, deliveryKey: string) =>
    `${account ?? DEFAULT_ACCOUNT}/${deliveryKey}`;
  for (const n of items) {
    const key = keyOf(n.account, n.delivery_key);
    const seen = counts.get(key);
    if (seen) seen.count++;
    else counts.set(key, { n, count: 1 });
  }
  const keys = [...counts.keys()].sort();
  const rows = await db
    .insertInto('notifications')
    .values(
      keys.map((key) => {
        const { n, count } = counts.get(key)!;
        return {
          ...n,
          payload: JSON.stringify(n.payload),
          delivery_count: count,
          received_at: sql<string>`clock_timestamp()`,
          last_received_at: sql<string>`clock_timestamp()`,
        };
      }),
    )
    .onConflict((oc) =>
      oc.columns(['account', 'delivery_key']).doUpdateSet({
        delivery_count: sql<number>`notifications.delivery_count + excluded.delivery_count`,
        last_received_at: sql<string>`greatest(notifications.last_received_at, excluded.last_received_at)`,
      }),
    )
    .returning([
      'notification_id',
      'account',
      'delivery_key',
      'delivery_count',
      sql<boolean>`(xmax = 0)`.as('inserted'),
    ])
    .execute();
  const byKey = new Map(rows.map((r) => [keyOf(r.account, r.delivery_key), { ...r, first: true }]));
  return items.map((n) => {
    const row = byKey.get(keyOf(n.account, n.delivery_key));
    if (!row) throw new Error(`the batch insert returned no row for delivery ${n.delivery_key}`);
    const inserted = row.inserted && row.first;
    row.first = false;
    return { notificationId: row.notification_id, inserted, deliveryCount: row.delivery_count };
  });
}

export interface QuarantineInput {
  /** Account the body was sent for, when known; null when no configured account matches it. */
  account?: string | null;
  kind: string;
  reason: string;
  /** The body as received: the bytes, or text (stored as its UTF-8 bytes). */
  body: string | Uint8Array;
  contentType?: string | null;
  remoteAddress?: string | null;
  receivedAt?: string;
}

/** Text PostgreSQL can hold: no NUL, no lone surrogate (anything else would fail or be altered). */
function storableText(value: string | null | undefined, max = 4000): string | null {
  if (value === null || value === undefined) return null;
  const clean = value
    .replaceAll('\u0000', '\\u0000')
    .replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The transactionId a body names, read from its text even when it is not valid JSON (a refused body
 * is often one): what lets a missing notification point at its quarantined delivery. The same
 * expression as migration 0015_follow_up_and_time_order's.
 */
export function transactionIdInBody(text: string | null): string | null {
  return text ? (/"transactionId"\s*:\s*"([^"\\]{1,64})"/.exec(text)?.[1] ?? null) : null;
}

/** sha256 hex of the kind, a newline and the raw bytes: the quarantine's dedupe key. */
export function quarantineKey(kind: string, raw: Uint8Array): string {
  return createHash('sha256').update(`${kind}\n`).update(raw).digest('hex');
}

/**
 * Keeps a refused body with the reason, so that nothing the provider sent is lost: the raw bytes in
 * raw_body (bytea, never altered), and `body` as text when the bytes are text PostgreSQL can hold.
 * The same body refused again for the same account (a provider retry) is counted on the same row,
 * not added. Nothing in
 * the body can make this insert fail: only the database being away can.
 */
export async function quarantineNotification(db: Db, q: QuarantineInput): Promise<number> {
  const raw = typeof q.body === 'string' ? Buffer.from(q.body, 'utf8') : Buffer.from(q.body);
  let text: string | null;
  try {
    text = strictUtf8.decode(raw);
    if (text.includes('\u0000')) text = null;
  } catch {
    text = null;
  }
  const receivedAt = q.receivedAt ?? null;
  const row = await db
    .insertInto('notification_quarantine')
    .values({
      account: q.account === undefined ? DEFAULT_ACCOUNT : q.account,
      kind: storableText(q.kind, 40) ?? 'unknown',
      // Analysts read the reason; the body is personal data, for the pipeline's role only.
      reason: storableText(redactPersonal(q.reason)) ?? '',
      body: text,
      transaction_id: transactionIdInBody(text),
      raw_body: raw,
      body_sha256: quarantineKey(q.kind, raw),
      content_type: storableText(q.contentType, 200),
      remote_address: storableText(q.remoteAddress, 100),
      received_at: receivedAt ?? sql<string>`clock_timestamp()`,
      last_received_at: receivedAt ?? sql<string>`clock_timestamp()`,
    })
    .onConflict((oc) =>
      oc.columns(['account', 'body_sha256']).doUpdateSet({
        // A history import replayed (same received_at) does not count the delivery twice.
        delivery_count: sql<number>`case when excluded.received_at in
          (notification_quarantine.received_at, notification_quarantine.last_received_at)
          then notification_quarantine.delivery_count else notification_quarantine.delivery_count + 1 end`,
        received_at: sql<string>`least(notification_quarantine.received_at, excluded.received_at)`,
        last_received_at: sql<string>`greatest(notification_quarantine.last_received_at, excluded.last_received_at)`,
      }),
    )
    .returning('quarantine_id')
    .executeTakeFirstOrThrow();
  return row.quarantine_id;
}
