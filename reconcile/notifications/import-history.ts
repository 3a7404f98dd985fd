import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { describeJsonError } from '../../lib/privacy.ts';
import { normaliseInstant } from '../../lib/time/iso-instant.ts';
import { normaliseNotification } from './normalise-notification.ts';
import { quarantineNotification, storeNotification } from './store-notification.ts';

export interface ImportSummary {
  readonly linesRead: number;
  readonly stored: number;
  readonly duplicates: number;
  readonly quarantined: number;
}

/**
 * Imports a notification history export (NDJSON, one `{kind, received_at, payload}` per line), e.g.
 * a merchant migrating its webhook log. Same validation, normalisation and dedupe as the receiver;
 * received_at is the original delivery time. Re-importing the same file changes nothing (a delivery
 * at an instant already recorded is not counted twice). Refused lines go to notification_quarantine.
 * Commits every 1000 lines; a crash half-way is repaired by importing the file again.
 */
export async function importNotificationHistory(
  db: Kysely<Database>,
  input: Readable,
  options: { fileName?: string } = {},
): Promise<ImportSummary> {
  let linesRead = 0;
  let stored = 0;
  let duplicates = 0;
  let quarantined = 0;
  let batch: string[] = [];
  const flush = async () => {
    const lines = batch;
    batch = [];
    await db.transaction().execute(async (trx) => {
      for (const line of lines) {
        let entry: { kind?: unknown; received_at?: unknown; payload?: unknown };
        let receivedAt: string | undefined;
        const kind = () => (entry?.kind === 'return' ? 'return' : 'transaction');
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch (error) {
          await quarantineNotification(trx, {
            kind: 'import',
            reason: `${options.fileName ?? 'import'}: line is not JSON: ${describeJsonError(error)}`,
            body: line,
          });
          quarantined++;
          continue;
        }
        try {
          receivedAt =
            typeof entry.received_at === 'string' ? normaliseInstant(entry.received_at) : undefined;
        } catch {
          receivedAt = undefined;
        }
        const problem =
          entry.kind !== 'transaction' && entry.kind !== 'return'
            ? `kind must be transaction or return, got ${JSON.stringify(entry.kind)}`
            : receivedAt === undefined
              ? `received_at must be an ISO-8601 instant, got ${JSON.stringify(entry.received_at)}`
              : null;
        const result = problem ? null : normaliseNotification(kind(), entry.payload);
        if (problem || !result || !result.ok) {
          await quarantineNotification(trx, {
            // Never the line's own value: analysts read kind, and the line may hold anything.
            kind: entry.kind === 'transaction' || entry.kind === 'return' ? entry.kind : 'import',
            reason: problem ?? (result && !result.ok ? result.reason : 'invalid'),
            body: JSON.stringify(entry.payload ?? null),
            ...(receivedAt ? { receivedAt } : {}),
          });
          quarantined++;
          continue;
        }
        const s = await storeNotification(trx, result.value, { receivedAt, replay: true });
        if (s.inserted) stored++;
        else duplicates++;
      }
    });
  };
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    linesRead++;
    batch.push(line);
    if (batch.length >= 1000) await flush();
  }
  if (batch.length > 0) await flush();
  return { linesRead, stored, duplicates, quarantined };
}
