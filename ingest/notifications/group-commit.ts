import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.ts';
import { PROFILE, writeProfileLine } from '../../observability/profile.ts';
import { isDatabaseUnavailable } from '../../db/connection-errors.ts';
import type { NormalisedNotification } from './normalise-notification.ts';
import { type StoredNotification, storeNotification, storeNotificationBatch } from './store-notification.ts';

export interface GroupCommitOptions {
  /** How long the first delivery of a batch waits for others to join it, ms (default 2). */
  readonly gatherMs?: number;
  /** Most deliveries in one batch (default 200). */
  readonly maxBatch?: number;
  /** Batches committing at the same time (default 2): one commits while the next gathers. */
  readonly maxInFlight?: number;
}

interface Pending {
  readonly n: NormalisedNotification;
  resolve(stored: StoredNotification): void;
  reject(error: unknown): void;
}

export interface NotificationWriter {
  /** Resolves once the delivery is committed (never before), rejects when it could not be. */
  store(n: NormalisedNotification): Promise<StoredNotification>;
  /** Waits for every submitted delivery to be settled. */
  drain(): Promise<void>;
}

/**
 * Group commit for the receiver: deliveries that arrive within a few milliseconds of each other are
 * written by one statement and committed together, and each caller is answered only after that
 * commit. One commit (one WAL flush) per batch instead of one per delivery is what lets 50 concurrent
 * senders reach more than a thousand deliveries a second.
 *
 * A batch that fails because the database is away fails every delivery in it (nothing was stored:
 * the receiver answers 503). A batch that fails for any other reason is retried one delivery at a
 * time, so that one body PostgreSQL refuses fails alone and can be quarantined.
 */
export function createNotificationWriter(db: Db, options: GroupCommitOptions = {}): NotificationWriter {
  const gatherMs = options.gatherMs ?? 2;
  const maxBatch = options.maxBatch ?? 200;
  const maxInFlight = options.maxInFlight ?? 2;
  let queue: Pending[] = [];
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  const idle: (() => void)[] = [];

  const settleIdle = () => {
    if (queue.length === 0 && inFlight === 0) for (const wake of idle.splice(0)) wake();
  };

  const commit = async (batch: Pending[]): Promise<void> => {
    const startedAt = performance.now();
    try {
      const results = await storeNotificationBatch(
        db,
        batch.map((p) => p.n),
      );
      if (PROFILE) writeProfileLine(startedAt, `group commit of ${batch.length} deliveries`);
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (error) {
      if (isDatabaseUnavailable(error) || batch.length === 1) {
        for (const p of batch) p.reject(error);
        return;
      }
      for (const p of batch) {
        try {
          p.resolve(await storeNotification(db, p.n));
        } catch (single) {
          p.reject(single);
        }
      }
    }
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      void commit(batch).finally(() => {
        inFlight--;
        // Deliveries that queued while every slot was busy have waited long enough: go at once.
        if (queue.length > 0) flush();
        settleIdle();
      });
    }
  };

  return {
    store: (n) =>
      new Promise<StoredNotification>((resolve, reject) => {
        queue.push({ n, resolve, reject });
        if (queue.length >= maxBatch) flush();
        else if (!timer && inFlight < maxInFlight) timer = setTimeout(flush, gatherMs);
      }),
    drain: () =>
      new Promise<void>((resolve) => {
        idle.push(resolve);
        settleIdle();
      }),
  };
}
