import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadSummary } from '../../domain/load-summary.ts';
import type { PullRequest } from '../../activities/dependencies.ts';
import { createActivities } from '../../activities/index.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { recordCommittedLoad } from '../support/committed-load.ts';
import { loadConfig } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { backfillProgress, startBackfill } from '../../workers/client/backfill.ts';
import { daysInclusive } from '../../domain/time/calendar.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * Orchestration mechanics with a real server, worker and database, and a pull that records a
 * committed load of one row per day instead of calling a provider: windows, parallelism,
 * continue-as-new, re-attach, failures in the progress query, cancellation.
 */
let server: DevServer;
let h: DatabaseHandle;
const config = loadConfig({});

beforeAll(async () => {
  [server, h] = await Promise.all([startTestTemporal(), createTestDatabase()]);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

function recordingPull(options: { fail?: (req: PullRequest) => Error | undefined; hold?: boolean } = {}) {
  const calls: PullRequest[] = [];
  let concurrent = 0;
  let maxConcurrent = 0;
  const pullSource = async (deps: { handle: DatabaseHandle }, req: PullRequest): Promise<LoadSummary> => {
    calls.push(req);
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    try {
      const failure = options.fail?.(req);
      if (failure) throw failure;
      if (options.hold) {
        await new Promise((_, reject) =>
          req.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      }
      await sleep(20);
      const rows = daysInclusive(req.from, req.to);
      return await recordCommittedLoad(deps.handle.db, req, {
        rowsRead: rows,
        rowsInserted: rows,
        durationMs: 20,
      });
    } finally {
      concurrent--;
    }
  };
  return { calls, pullSource, maxConcurrent: () => maxConcurrent };
}

describe('backfill workflow (recording pull)', () => {
  it('runs 7 months as 6 windows of at most 40 days, 2 at a time, continuing as new, and re-attaches', async () => {
    const taskQueue = uniqueTaskQueue('mechanics');
    const pull = recordingPull();
    const reconciled: string[] = [];
    const activities = createActivities({
      handle: h,
      provider: null,
      config,
      pullSource: pull.pullSource,
      reconcileRange: async (_db, req) => {
        reconciled.push(`${req.from}..${req.to}`);
        return {};
      },
    });
    const worker = await startTestWorker(server, taskQueue, activities);
    try {
      const input = { from: '2026-01-01', to: '2026-07-31', taskQueue, maxWindowsPerRun: 2 };
      const first = await startBackfill(server.client, input);
      const again = await startBackfill(server.client, input);
      expect(first.started).toBe(true);
      expect(again.started).toBe(false);
      const result = await first.handle.result();
      expect(result).toEqual({
        from: '2026-01-01',
        to: '2026-07-31',
        windows: 6,
        rowsRead: 212 * 5,
        rowsLoaded: 212 * 5,
        rowsRejected: 0,
        runs: 3,
        // The range's low-volume check (none of these activities loads rows, so no day is judged).
        volume: [
          {
            account: 'default',
            from: '2026-01-01',
            to: '2026-07-31',
            judged: 0,
            flagged: 0,
            alerted: 0,
            flags: [],
          },
        ],
      });
      const windows = [
        '2026-01-01..2026-02-09',
        '2026-02-10..2026-03-21',
        '2026-03-22..2026-04-30',
        '2026-05-01..2026-06-09',
        '2026-06-10..2026-07-19',
        '2026-07-20..2026-07-31',
      ];
      // Each window by itself, then, once all are loaded, each again in order (the final pass).
      expect(reconciled.slice(0, 6).sort()).toEqual(windows);
      expect(reconciled.slice(6)).toEqual(windows);
      expect(pull.calls).toHaveLength(30);
      expect(Math.max(...pull.calls.map((c) => daysInclusive(c.from, c.to)))).toBe(40);
      // 2 windows at a time, 5 sources each.
      expect(pull.maxConcurrent()).toBeLessThanOrEqual(10);
      expect(pull.maxConcurrent()).toBeGreaterThan(5);
      expect(new Set(pull.calls.map((c) => c.workflowId))).toEqual(
        new Set(reconciled.map((r) => `window-${r.replace('..', '-')}`)),
      );
      const progress = await backfillProgress(first.handle);
      expect(progress).toMatchObject({
        windowsTotal: 6,
        windowsDone: 6,
        windowsFailed: 0,
        windowsLeft: 0,
        rowsLoaded: 1060,
        failures: [],
        running: [],
        runs: 3,
        finished: true,
      });
      const cursors = await h.db
        .selectFrom('pull_cursors')
        .select(({ fn }) => fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(cursors.n)).toBe(30);
      // Finished: the same range starts afresh. Terminated here (its windows with it), so that no
      // window of this run is left running for the next test's backfill of the same windows.
      const afresh = await startBackfill(server.client, input);
      expect(afresh.started).toBe(true);
      await afresh.handle.terminate('test done');
    } finally {
      await worker.stop();
    }
  });

  it('stops a window on a non-retryable error after one attempt and shows the message in the progress query', async () => {
    const taskQueue = uniqueTaskQueue('failing');
    const pull = recordingPull({
      fail: (req) =>
        req.source === 'legacy-returns' && req.from === '2026-02-10'
          ? new ConfigError(
              'legacy query refused: merchant_id or merchant_pass is wrong; check RECON_LEGACY_MERCHANT_ID and RECON_LEGACY_MERCHANT_PASS',
            )
          : undefined,
    });
    const activities = createActivities({
      handle: h,
      provider: null,
      config,
      pullSource: pull.pullSource,
      reconcileRange: async () => ({}),
    });
    const worker = await startTestWorker(server, taskQueue, activities);
    try {
      const { handle } = await startBackfill(server.client, {
        from: '2026-01-01',
        to: '2026-03-21',
        taskQueue,
      });
      const error = await handle.result().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const message =
        'window 2026-02-10..2026-03-21: 1 of 5 sources failed; legacy-returns: legacy query refused: merchant_id or merchant_pass is wrong; check RECON_LEGACY_MERCHANT_ID and RECON_LEGACY_MERCHANT_PASS';
      expect((error as WorkflowFailedError).cause?.message).toBe(
        `backfill 2026-01-01..2026-03-21: 1 of 2 windows failed; 2026-02-10..2026-03-21: ${message}`,
      );
      const progress = await backfillProgress(handle);
      expect(progress.failures).toEqual([{ from: '2026-02-10', to: '2026-03-21', message }]);
      expect(progress).toMatchObject({ windowsDone: 1, windowsFailed: 1, windowsLeft: 0, rowsLoaded: 200 });
      expect(pull.calls.filter((c) => c.source === 'legacy-returns' && c.from === '2026-02-10')).toHaveLength(
        1,
      );
    } finally {
      await worker.stop();
    }
  });

  it("records the typed error of a failed reconciliation activity as the window's message", async () => {
    const taskQueue = uniqueTaskQueue('reconcile-fails');
    const pull = recordingPull();
    const activities = createActivities({
      handle: h,
      provider: null,
      config,
      pullSource: pull.pullSource,
      reconcileRange: async () => {
        throw new ConfigError('fee schedule has no rule for IBT DEBIT CAD: add one to fee_schedule');
      },
    });
    const worker = await startTestWorker(server, taskQueue, activities);
    try {
      const { handle } = await startBackfill(server.client, {
        from: '2024-01-01',
        to: '2024-01-05',
        taskQueue,
      });
      await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
      expect((await backfillProgress(handle)).failures).toEqual([
        {
          from: '2024-01-01',
          to: '2024-01-05',
          message: 'fee schedule has no rule for IBT DEBIT CAD: add one to fee_schedule',
        },
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('cancels its running windows when cancelled', async () => {
    const taskQueue = uniqueTaskQueue('cancel');
    const pull = recordingPull({ hold: true });
    const activities = createActivities({
      handle: h,
      provider: null,
      config,
      pullSource: pull.pullSource,
      reconcileRange: async () => ({}),
      heartbeatEverySeconds: 0.2,
    });
    const worker = await startTestWorker(server, taskQueue, activities);
    try {
      const { handle } = await startBackfill(server.client, {
        from: '2025-01-01',
        to: '2025-06-30',
        taskQueue,
      });
      for (let i = 0; i < 100 && (await backfillProgress(handle)).running.length < 2; i++) await sleep(50);
      expect((await backfillProgress(handle)).running).toEqual([
        { from: '2025-01-01', to: '2025-02-09' },
        { from: '2025-02-10', to: '2025-03-21' },
      ]);
      while (pull.calls.length < 10) await sleep(20);
      await handle.cancel();
      await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
      // Both running windows have ended cancelled by the time the backfill says so, not terminated
      // afterwards by the parent-close policy (before CANCEL_WAITS_PATCH, the backfill ended with the
      // first window's cancellation, and on a loaded machine the second was still running).
      for (const id of ['window-2025-01-01-2025-02-09', 'window-2025-02-10-2025-03-21']) {
        const child = await server.client.workflow.getHandle(id).describe();
        expect(child.status.name, id).toBe('CANCELLED');
      }
    } finally {
      await worker.stop();
    }
  });
});
