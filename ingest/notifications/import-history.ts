import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database, Db } from '../../db/database.ts';
import { TooManyRejected } from '../../domain/errors.ts';
import { describeJsonError } from '../../domain/privacy.ts';
import { normaliseInstant } from '../../domain/time/iso-instant.ts';
import { normaliseNotification } from './normalise-notification.ts';
import { quarantineNotification, storeNotification } from './store-notification.ts';
import { DEFAULT_ACCOUNT } from '../../domain/account-name.ts';

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
 * Commits every 1000 lines (a crash half-way is repaired by importing the file again), or once for the
 * whole file when `maxQuarantined` is given.
 */
export async function importNotificationHistory(
  db: Kysely<Database>,
  input: Readable,
  options: {
    fileName?: string;
    /** Account every notification of the export is filed under; 'default' when not given. */
    account?: string;
    /**
     * More quarantined lines than this fails the import whole (TooManyRejected): the file is then
     * imported in one transaction, and nothing of it is kept, quarantine included. Unset: no limit.
     */
    maxQuarantined?: number;
    /** Called with the quarantine_id of each line quarantined (committed once the import returns). */
    onQuarantined?: (quarantineId: number) => void;
  } = {},
): Promise<ImportSummary> {
  const counts = { linesRead: 0, stored: 0, duplicates: 0, quarantined: 0 };
  // Created where it is read: readline drops the lines it emits before the loop starts listening.
  const lines = () => createInterface({ input, crlfDelay: Infinity });
  const importOne = async (trx: Db, line: string) => {
    const outcome = await importLine(
      trx,
      line,
      options.fileName ?? 'import',
      options.account ?? DEFAULT_ACCOUNT,
    );
    if (outcome === 'stored') counts.stored++;
    else if (outcome === 'duplicate') counts.duplicates++;
    else {
      counts.quarantined++;
      if (options.maxQuarantined !== undefined && counts.quarantined > options.maxQuarantined) {
        throw new TooManyRejected(options.fileName ?? 'import', counts.quarantined, options.maxQuarantined);
      }
      options.onQuarantined?.(outcome.quarantineId);
    }
  };
  if (options.maxQuarantined !== undefined) {
    await db.transaction().execute(async (trx) => {
      for await (const line of lines()) {
        if (line.trim() === '') continue;
        counts.linesRead++;
        await importOne(trx, line);
      }
    });
    return counts;
  }
  let batch: string[] = [];
  const flush = async () => {
    const taken = batch;
    batch = [];
    await db.transaction().execute(async (trx) => {
      for (const line of taken) await importOne(trx, line);
    });
  };
  for await (const line of lines()) {
    if (line.trim() === '') continue;
    counts.linesRead++;
    batch.push(line);
    if (batch.length >= 1000) await flush();
  }
  if (batch.length > 0) await flush();
  return counts;
}

/** One line of the export: stored, a duplicate of a delivery already recorded, or quarantined. */
async function importLine(
  trx: Db,
  line: string,
  fileName: string,
  account: string,
): Promise<'stored' | 'duplicate' | { quarantineId: number }> {
  let entry: { kind?: unknown; received_at?: unknown; payload?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch (error) {
    const quarantineId = await quarantineNotification(trx, {
      account,
      kind: 'import',
      reason: `${fileName}: line is not JSON: ${describeJsonError(error)}`,
      body: line,
    });
    return { quarantineId };
  }
  let receivedAt: string | undefined;
  try {
    receivedAt = typeof entry?.received_at === 'string' ? normaliseInstant(entry.received_at) : undefined;
  } catch {
    receivedAt = undefined;
  }
  const kind = entry?.kind === 'return' ? 'return' : 'transaction';
  const problem =
    entry?.kind !== 'transaction' && entry?.kind !== 'return'
      ? `kind must be transaction or return, got ${JSON.stringify(entry?.kind)}`
      : receivedAt === undefined
        ? `received_at must be an ISO-8601 instant, got ${JSON.stringify(entry.received_at)}`
        : null;
  const result = problem ? null : normaliseNotification(kind, entry.payload);
  if (problem || !result || !result.ok) {
    const quarantineId = await quarantineNotification(trx, {
      account,
      // Never the line's own value: analysts read kind, and the line may hold anything.
      kind: entry?.kind === 'transaction' || entry?.kind === 'return' ? entry.kind : 'import',
      reason: problem ?? (result && !result.ok ? result.reason : 'invalid'),
      body: JSON.stringify(entry?.payload ?? null),
      ...(receivedAt ? { receivedAt } : {}),
    });
    return { quarantineId };
  }
  const s = await storeNotification(trx, { ...result.value, account }, { receivedAt, replay: true });
  return s.inserted ? 'stored' : 'duplicate';
}
