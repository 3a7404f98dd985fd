import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PullRequest } from '../../activities/dependencies.ts';
import type { LoadSummary } from '../../domain/load-summary.ts';
import { createActivities } from '../../activities/index.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { recordCommittedLoad } from '../support/committed-load.ts';
import { startBackfill } from '../../workers/client/backfill.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * Each account's provider rate limit is its own and global across workers: two workers poll the
 * provider queues of two accounts, limited to LIMIT activities per second per queue. The pulls of
 * each account start at most at about LIMIT per second, both workers together, while the two
 * accounts together go faster than LIMIT: one account's quota never takes another's.
 */
const LIMIT = 3;
let server: DevServer;
let h: DatabaseHandle;

beforeAll(async () => {
  [server, h] = await Promise.all([startTestTemporal(), createTestDatabase()]);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const starts: { account: string; at: number; pid: string }[] = [];

function recordingPull(worker: string) {
  return async (deps: { handle: DatabaseHandle }, req: PullRequest): Promise<LoadSummary> => {
    starts.push({ account: req.account ?? 'default', at: Date.now(), pid: worker });
    return recordCommittedLoad(deps.handle.db, req);
  };
}

function activities(worker: string) {
  const config = loadConfig({});
  return createActivities({
    handle: h,
    provider: null,
    config,
    accounts: { names: ['ca-main', 'us-main'], get: () => ({ client: null, config }) },
    pullSource: recordingPull(worker),
    reconcileRange: async () => ({}),
  });
}

/** Most starts in any one-second span. */
function peakPerSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}

it('holds each account to its own queue rate, across two workers, while the accounts together go faster', async () => {
  const taskQueue = uniqueTaskQueue('rates');
  const accounts = ['ca-main', 'us-main'];
  // Two workers as two processes would be: each with its own connection.
  const second = await NativeConnection.connect({ address: server.address });
  const workers = await Promise.all(
    [
      ['w1', server],
      ['w2', { ...server, nativeConnection: second }],
    ].map(([w, s]) =>
      startTestWorker(s as DevServer, taskQueue, activities(w as string), {
        accounts,
        activitiesPerSecond: LIMIT,
      }),
    ),
  );
  try {
    const { handle } = await startBackfill(server.client, {
      from: '2026-01-01',
      to: '2026-01-04',
      windowDays: 1,
      parallelism: 8,
      accounts,
      sources: ['report-transactions', 'report-returns', 'legacy-transactions'],
      taskQueue,
    });
    await handle.result();
  } finally {
    for (const w of workers) await w.stop();
    await second.close();
  }
  // 4 windows × 3 sources per account.
  for (const account of accounts) expect(starts.filter((s) => s.account === account)).toHaveLength(12);
  expect(new Set(starts.map((s) => s.pid))).toEqual(new Set(['w1', 'w2']));
  for (const account of accounts) {
    const times = starts.filter((s) => s.account === account).map((s) => s.at);
    // The server's limiter lets a first burst through; after it, LIMIT per second. Measured as the
    // average rate over the rest of the starts, not the busiest second: a worker whose event loop
    // stalls (a loaded machine) starts tasks the server handed out at the limit's pace in a clump,
    // which moves starts within the span but not its length. A limit held per worker instead of
    // per queue starts them at twice the rate.
    const afterBurst = times.sort((a, b) => a - b).slice(LIMIT);
    const perSecond = ((afterBurst.length - 1) * 1000) / (afterBurst.at(-1)! - afterBurst[0]!);
    expect(perSecond).toBeLessThanOrEqual(LIMIT + 1);
  }
  expect(peakPerSecond(starts.map((s) => s.at))).toBeGreaterThan(LIMIT + 1);
});
