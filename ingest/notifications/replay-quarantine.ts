import { sql } from 'kysely';
import type { Accounts } from '../../config/accounts.ts';
import type { Db } from '../../db/database.ts';
import { describeJsonError, redactPersonal } from '../../domain/privacy.ts';
import { fileUnder } from './notification-account.ts';
import { normaliseNotification, type NotificationKind } from './normalise-notification.ts';
import { storeNotification } from './store-notification.ts';

/**
 * `recon notifications replay`: takes quarantined deliveries into the notification history once the
 * cause of their refusal is fixed (an account added to the configuration, a receiver rule corrected).
 * Each delivery still waiting (replayed_at null) is read again from its raw bytes through the same
 * checks as the receiver's (UTF-8, JSON, the notification's fields, its account); one that passes is
 * stored with its original received_at and marked replayed with the notification it became, in one
 * transaction. Idempotent: a replayed delivery is never read again, and storing a body already held
 * counts nothing twice (the history import's replay rule). One still refused stays as it is, and its
 * current reason is reported.
 */

export interface ReplayRequest {
  /** The accounts deliveries are filed under (config/accounts.ts); absent: every delivery is `default`'s. */
  readonly accounts?: Accounts;
  /** Only these quarantine ids; absent: every delivery still waiting. */
  readonly ids?: readonly number[];
}

export interface ReplaySummary {
  readonly examined: number;
  /** Stored as new notifications. */
  readonly replayed: number;
  /** Already held (the same body delivered again after its refusal): marked replayed, nothing added. */
  readonly alreadyHeld: number;
  readonly stillRefused: readonly { readonly quarantineId: number; readonly reason: string }[];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

type Reading =
  | { ok: true; value: ReturnType<typeof normaliseNotification> & { ok: true }; account: string }
  | { ok: false; reason: string };

/** The receiver's checks on one quarantined body, in its order (ingest/notifications/server.ts). */
function readAgain(
  row: { kind: string; raw_body: Buffer; account: string | null },
  accounts: Accounts | undefined,
): Reading {
  if (row.kind !== 'transaction' && row.kind !== 'return')
    return { ok: false, reason: `kept as ${row.kind}: not a notification body, nothing to replay` };
  let body: unknown;
  try {
    body = JSON.parse(strictUtf8.decode(row.raw_body));
  } catch (error) {
    return { ok: false, reason: `body is not UTF-8 JSON: ${describeJsonError(error)}` };
  }
  const result = normaliseNotification(row.kind as NotificationKind, body);
  if (!result.ok) return { ok: false, reason: result.reason };
  const filing = fileUnder(accounts, row.account ?? undefined, result.value.merchant_id);
  if (!filing.ok) return { ok: false, reason: filing.reason };
  return { ok: true, value: result, account: filing.account };
}

/** Replays the quarantined deliveries of `req` (see the module comment). */
export async function replayQuarantine(db: Db, req: ReplayRequest = {}): Promise<ReplaySummary> {
  let query = db
    .selectFrom('notification_quarantine')
    .select(['quarantine_id', 'kind', 'raw_body', 'account'])
    // To the microsecond: the notification keeps the instant of the first delivery.
    .select(
      sql<string>`to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('received_at'),
    )
    .where('replayed_at', 'is', null)
    .orderBy('quarantine_id');
  if (req.ids !== undefined) query = query.where('quarantine_id', 'in', req.ids.length ? req.ids : [-1]);
  const rows = await query.execute();
  let replayed = 0;
  let alreadyHeld = 0;
  const stillRefused: { quarantineId: number; reason: string }[] = [];
  for (const row of rows) {
    const reading = readAgain(row, req.accounts);
    if (!reading.ok) {
      stillRefused.push({ quarantineId: row.quarantine_id, reason: redactPersonal(reading.reason) });
      continue;
    }
    const stored = await db.transaction().execute(async (trx) => {
      const s = await storeNotification(
        trx,
        { ...reading.value.value, account: reading.account },
        { receivedAt: row.received_at, replay: true },
      );
      await trx
        .updateTable('notification_quarantine')
        .set({ replayed_at: sql<string>`now()`, notification_id: s.notificationId })
        .where('quarantine_id', '=', row.quarantine_id)
        .execute();
      return s;
    });
    if (stored.inserted) replayed++;
    else alreadyHeld++;
  }
  return { examined: rows.length, replayed, alreadyHeld, stillRefused };
}
