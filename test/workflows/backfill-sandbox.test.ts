import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import proto from '@temporalio/proto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { backfillProgress, startBackfill } from '../../workers/client/backfill.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import type { BackfillProgress, WindowResult } from '../../workflows/types.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { splitWindows, windowWorkflowId } from '../../workflows/windows.ts';
import { freePort } from '../../db/free-port.ts';
import { createTestDatabase } from '../support/database.ts';
import { sample } from '../support/prometheus.ts';
import { spawnRecon } from '../support/recon-process.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';
import { tableChecksums } from '../support/workflow-warehouse.ts';

/**
 * The product path end to end: real Temporal, real worker, the real activities (provider client over
 * HTTP to the sandbox on 127.0.0.1, parser, loader, matching) and a real PostgreSQL per scenario.
 */

/** Tests that start `recon worker` processes: each bundles the workflows and connects on 2 shared cores. */
const WORKER_PROCESS_TEST_MS = 180_000;
const FROM = '2026-01-01';
const TO = '2026-07-31';
let server: DevServer;
let sandbox: Sandbox;
const databases: DatabaseHandle[] = [];
let reference: Awaited<ReturnType<typeof tableChecksums>> | undefined;

beforeAll(async () => {
  [server, sandbox] = await Promise.all([
    startTestTemporal(),
    startSandbox({ seed: 'workflows', transactions: 1200, from: FROM, to: TO }),
  ]);
});
afterAll(async () => {
  // Reap every worker process (and anything it started) before what it talks to goes away.
  for (const w of workerProcesses) await reap(w);
  rmSync(workerDir, { recursive: true, force: true });
  await sandbox?.close();
  await server?.close();
  for (const h of databases) await h.close();
});

/** Heartbeat timeout of the killed run's activities (production: 30 s pull, 2 min matching). */
const HEARTBEAT_TIMEOUT_SECONDS = 3;
/** Working directory of the worker processes: no .env, no data directory of anyone else. */
const workerDir = mkdtempSync(join(tmpdir(), 'recon-kill-'));

interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What it wrote on stdout and stderr so far (shown when the test fails). */
  output(): string;
}
const workerProcesses: WorkerProcess[] = [];

/**
 * `recon worker` as an OS process of its own (its own process group, so a kill reaches all of it),
 * on the test's Temporal dev server, database and sandbox, configured as in production: env only.
 */
function spawnWorker(h: DatabaseHandle, taskQueue: string, env: Record<string, string> = {}): WorkerProcess {
  const { child, output } = spawnRecon(
    h.connectionString,
    ['worker'],
    {
      ...sandbox.env(),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      RECON_DATA_DIR: workerDir,
      RECON_PROVIDER_ACTIVITIES_PER_SECOND: '1000',
      RECON_WORKER_SHUTDOWN_GRACE_SECONDS: '1',
      ...env,
    },
    { cwd: workerDir, detached: true },
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const w = { child, exited, output };
  workerProcesses.push(w);
  return w;
}

/** Kills a worker process and its whole group (anything it started) if still there; waits for it. */
async function reap(w: WorkerProcess): Promise<void> {
  if (w.child.exitCode === null && w.child.signalCode === null) {
    try {
      process.kill(-w.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await w.exited;
}

function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pull or matching activities a worker is running right now (state STARTED) in these windows. */
async function startedActivities(
  windows: readonly { from: string; to: string }[],
): Promise<{ window: string; activityId: string }[]> {
  const found: { window: string; activityId: string }[] = [];
  for (const w of windows) {
    const window = windowWorkflowId(w);
    const d = await server.client.workflow.getHandle(window).describe();
    for (const a of d.raw.pendingActivities ?? []) {
      if (a.state === proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
        found.push({ window, activityId: a.activityId! });
      }
    }
  }
  return found;
}

/** Every activity attempt started in the backfill's window workflows: by which worker, and when. */
async function activityStarts(
  windows: readonly { from: string; to: string }[],
): Promise<{ identity: string; at: number }[]> {
  const starts: { identity: string; at: number }[] = [];
  for (const w of windows) {
    // A window the backfill has only just scheduled may not exist yet.
    const history = await server.client.workflow
      .getHandle(windowWorkflowId(w))
      .fetchHistory()
      .catch(() => undefined);
    for (const e of history?.events ?? []) {
      const started = e.activityTaskStartedEventAttributes;
      if (started) starts.push({ identity: started.identity ?? '', at: timestampMs(e.eventTime) });
    }
  }
  return starts.sort((a, b) => a.at - b.at);
}

function timestampMs(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
}

/** Of the given activities, those whose final attempt started after a heartbeat timeout. */
async function heartbeatTimedOutRetries(
  activities: readonly { window: string; activityId: string }[],
): Promise<{ window: string; activityId: string; attempt: number; heartbeatTimeoutSeconds: number }[]> {
  const out: { window: string; activityId: string; attempt: number; heartbeatTimeoutSeconds: number }[] = [];
  for (const { window, activityId } of activities) {
    const events = (await server.client.workflow.getHandle(window).fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === activityId);
    const started = events.find(
      (e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === Number(scheduled?.eventId),
    )?.activityTaskStartedEventAttributes;
    if (
      started?.lastFailure?.timeoutFailureInfo?.timeoutType ===
      proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT
    ) {
      out.push({
        window,
        activityId,
        attempt: started.attempt ?? 0,
        heartbeatTimeoutSeconds: Number(
          scheduled?.activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds,
        ),
      });
    }
  }
  return out;
}

async function freshWarehouse(): Promise<DatabaseHandle> {
  const h = await createTestDatabase(12);
  databases.push(h);
  return h;
}

function activitiesFor(h: DatabaseHandle, env: Record<string, string> = {}) {
  return openProductionActivities(loadConfig({ ...sandbox.env(), ...env }), h);
}

async function ids(h: DatabaseHandle, table: string, column: string): Promise<string[]> {
  const r = await sql<{
    id: string;
  }>`select ${sql.ref(column)} as id from ${sql.table(table)} order by 1`.execute(h.db);
  return r.rows.map((x) => x.id);
}

describe('backfill against the sandbox', () => {
  it('loads exactly the sandbox data of 7 months in windows of at most 40 days, and a second run changes no row', async () => {
    const h = await freshWarehouse();
    const taskQueue = uniqueTaskQueue('sandbox');
    const opened = activitiesFor(h);
    const worker = await startTestWorker(server, taskQueue, opened.activities);
    try {
      const first = await startBackfill(server.client, { from: FROM, to: TO, taskQueue });
      const result = await first.handle.result();
      expect(result).toMatchObject({ from: FROM, to: TO, windows: 6, rowsRejected: 0, runs: 1 });
      // Each window's result carries its discrepancies by kind and currency; its counts hold no amount.
      const currencies = new Set<string | null>();
      for (const w of splitWindows(FROM, TO)) {
        const done: WindowResult = await server.client.workflow.getHandle(windowWorkflowId(w)).result();
        const listed = done.reconcile.discrepancies ?? [];
        expect(Object.keys(done.reconcile.counts).filter((k) => k.includes('cents'))).toEqual([]);
        expect(listed.reduce((n, d) => n + d.count, 0)).toBe(done.reconcile.counts.totalDiscrepancies);
        for (const d of listed) currencies.add(d.currency);
      }
      expect([...currencies].sort()).toEqual(['CAD', 'USD']);

      const range = { start: easternDayStartUtc(FROM), end: easternDayStartUtc(addDays(TO, 1)) };
      // Report and legacy rows of a transaction meet in provider_transactions: every fact is there once.
      const expectedTransactions = [...sandbox.history.facts(range)].map((t) => t.transactionId).sort();
      expect(expectedTransactions.length).toBeGreaterThan(500);
      expect(await ids(h, 'provider_transactions', 'transaction_id')).toEqual(expectedTransactions);
      const expectedReturns = [
        ...new Set(
          [...sandbox.history.returns(range), ...sandbox.history.legacyReturns(range)].map(
            (r) => r.return_transaction_id,
          ),
        ),
      ].sort();
      expect(await ids(h, 'provider_returns', 'return_transaction_id')).toEqual(expectedReturns);
      expect(result.rowsLoaded).toBe(
        Number(
          (
            await h.db
              .selectFrom('loads')
              .select((eb) => eb.fn.sum<number>('rows_loaded').as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
      );
      // Every load covers one window of at most 40 Eastern days (41 x 24 h bounds it across DST).
      const spans = await sql<{ hours: number }>`
        select extract(epoch from window_end - window_start)::int / 3600 as hours from loads
        where status = 'committed'`.execute(h.db);
      // A load that failed (and was retried by Temporal) kept nothing: every row points to a committed one.
      const orphans = await sql<{ n: number }>`
        select count(*)::int as n from provider_transactions t join loads l using (load_id) where l.status <> 'committed'`.execute(
        h.db,
      );
      expect(orphans.rows[0]!.n).toBe(0);
      expect(spans.rows).toHaveLength(30);
      expect(Math.max(...spans.rows.map((r) => r.hours))).toBeLessThanOrEqual(40 * 24 + 1);

      reference = await tableChecksums(h, { lineage: false });
      const before = await tableChecksums(h, { lineage: true });
      const lastLoad = await h.db
        .selectFrom('loads')
        .select((eb) => eb.fn.max('load_id').as('id'))
        .executeTakeFirstOrThrow();
      const again = await startBackfill(server.client, { from: FROM, to: TO, taskQueue });
      expect(again.started).toBe(true);
      const second = await again.handle.result();
      expect(second.rowsLoaded).toBe(result.rowsLoaded);
      expect(await tableChecksums(h, { lineage: true })).toEqual(before);
      const secondLoads = await h.db
        .selectFrom('loads')
        .select((eb) => [
          eb.fn.countAll<number>().as('loads'),
          eb.fn.sum<number>('rows_inserted').as('inserted'),
          eb.fn.sum<number>('rows_updated').as('updated'),
        ])
        .where('load_id', '>', lastLoad.id)
        .where('status', '=', 'committed')
        .executeTakeFirstOrThrow();
      expect({
        ...secondLoads,
        inserted: Number(secondLoads.inserted),
        updated: Number(secondLoads.updated),
      }).toEqual({
        loads: 30,
        inserted: 0,
        updated: 0,
      });
    } finally {
      await worker.stop();
      await opened.close();
    }
  });

  it(
    'ends with the same warehouse when the worker process is SIGKILLed mid-backfill and started again',
    async () => {
      expect(reference).toBeDefined(); // from the uninterrupted run above
      const h = await freshWarehouse();
      const taskQueue = uniqueTaskQueue('killed');
      // Every data response waits a second until the kill, so that windows are demonstrably mid-way.
      sandbox.setFaults({ slowMs: 1000 });
      try {
        const first = spawnWorker(h, taskQueue);
        const { handle } = await startBackfill(server.client, {
          from: FROM,
          to: TO,
          taskQueue,
          activityTuning: { heartbeatTimeoutSeconds: HEARTBEAT_TIMEOUT_SECONDS },
        });
        let inFlight: { window: string; activityId: string }[] = [];
        let mid: BackfillProgress;
        const deadline = Date.now() + 30_000;
        for (;;) {
          mid = await backfillProgress(handle);
          if (mid.windowsDone >= 1 && mid.windowsLeft > 0) {
            inFlight = await startedActivities(mid.running);
            if (inFlight.length > 0) break;
          }
          if (Date.now() > deadline)
            throw new Error(`backfill never got mid-way; worker said: ${first.output()}`);
          await sleep(50);
        }
        process.kill(-first.child.pid!, 'SIGKILL'); // the whole process group, no graceful shutdown
        sandbox.setFaults({});
        expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
        expect(processGroupAlive(first.child.pid!)).toBe(false);
        // Mid-way when it was killed: a window done, others left, activities of running windows in flight.
        expect(mid.windowsDone).toBeGreaterThanOrEqual(1);
        expect(mid.windowsLeft).toBeGreaterThan(0);
        expect(mid.rowsRead).toBeGreaterThan(0);

        const second = spawnWorker(h, taskQueue);
        const result = await handle.result();
        expect(result).toMatchObject({ windows: 6, rowsRejected: 0, runs: 1 });
        expect(await tableChecksums(h, { lineage: false })).toEqual(reference);
        // The killed worker's activities were retried by the new one after the (tuned) heartbeat timeout.
        const retried = await heartbeatTimedOutRetries(inFlight);
        expect(retried.length).toBeGreaterThan(0);
        expect(retried.map((r) => [r.attempt, r.heartbeatTimeoutSeconds])).toEqual(
          retried.map(() => [2, HEARTBEAT_TIMEOUT_SECONDS]),
        );

        // SIGTERM, unlike the kill, is a graceful shutdown: the worker stops and the process exits 0.
        process.kill(second.child.pid!, 'SIGTERM');
        expect(await second.exited).toEqual({ code: 0, signal: null });
        expect(second.output()).toContain('recon worker: stopped');
      } finally {
        sandbox.setFaults({});
        for (const w of workerProcesses) await reap(w);
      }
    },
    WORKER_PROCESS_TEST_MS,
  );

  it('stops windows on bad credentials after one attempt, with the error in the progress query', async () => {
    const h = await freshWarehouse();
    const taskQueue = uniqueTaskQueue('badcreds');
    const opened = activitiesFor(h, {
      RECON_CLIENT_SECRET: 'wrong-secret',
      RECON_LEGACY_MERCHANT_PASS: 'wrong-pass',
    });
    const worker = await startTestWorker(server, taskQueue, opened.activities);
    try {
      const started = Date.now();
      const { handle } = await startBackfill(server.client, {
        from: '2026-01-01',
        to: '2026-02-20',
        taskQueue,
      });
      await expect(handle.result()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(20_000);
      const progress = await backfillProgress(handle);
      expect(progress).toMatchObject({
        windowsTotal: 2,
        windowsDone: 0,
        windowsFailed: 2,
        windowsLeft: 0,
        rowsLoaded: 0,
      });
      for (const failure of progress.failures) {
        expect(failure.message).toMatch(
          /^window \d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}: 5 of 5 sources failed; report-transactions: /,
        );
        expect(failure.message).not.toContain('wrong-secret');
        expect(failure.message).not.toContain('wrong-pass');
      }
      expect(await ids(h, 'provider_transactions', 'transaction_id')).toEqual([]);
    } finally {
      await worker.stop();
      await opened.close();
    }
  });

  it(
    'shares one task queue between two worker processes: both run windows, and when one is SIGKILLed the other finishes',
    async () => {
      expect(reference).toBeDefined(); // from the uninterrupted run above
      const h = await freshWarehouse();
      const taskQueue = uniqueTaskQueue('two-workers');
      sandbox.setFaults({ slowMs: 300 });
      const a = spawnWorker(h, taskQueue);
      const b = spawnWorker(h, taskQueue);
      try {
        // 22-day windows: 10 of them over the 7 months, 4 at a time so that both workers have work.
        const { handle } = await startBackfill(server.client, {
          from: FROM,
          to: TO,
          taskQueue,
          windowDays: 22,
          parallelism: 4,
          activityTuning: { heartbeatTimeoutSeconds: HEARTBEAT_TIMEOUT_SECONDS },
        });
        const deadline = Date.now() + 60_000;
        let mid: BackfillProgress;
        for (;;) {
          mid = await backfillProgress(handle);
          const identities = new Set((await activityStarts(mid.running)).map((s) => s.identity));
          if (mid.windowsDone >= 1 && mid.windowsLeft > 0 && identities.size === 2) break;
          if (Date.now() > deadline)
            throw new Error(`both workers never ran windows; they said: ${a.output()} ${b.output()}`);
          await sleep(50);
        }
        process.kill(-a.child.pid!, 'SIGKILL');
        sandbox.setFaults({});
        expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
        const result = await handle.result();
        expect(result).toMatchObject({ windows: 10, rowsRejected: 0 });
        expect(await tableChecksums(h, { lineage: false })).toEqual(reference);
        // Both processes ran activities of the backfill's windows (identity: pid@host of each worker).
        const identities = new Set((await activityStarts(splitWindows(FROM, TO, 22))).map((s) => s.identity));
        expect([...identities].sort()).toEqual(
          [a.child.pid, b.child.pid].map((pid) => expect.stringMatching(new RegExp(`^${pid}@`))),
        );
      } finally {
        sandbox.setFaults({});
        for (const w of workerProcesses) await reap(w);
      }
    },
    WORKER_PROCESS_TEST_MS,
  );

  it(
    "holds the provider rate limit across all workers together, and each worker's /metrics adds up to the warehouse",
    async () => {
      const h = await freshWarehouse();
      const taskQueue = uniqueTaskQueue('rate');
      // Unlimited, these 42 activities start at about 30/s. The server's limiter allows a burst at first,
      // so the rate is measured after the first second.
      const perSecond = 4;
      const env = { RECON_PROVIDER_ACTIVITIES_PER_SECOND: String(perSecond) };
      const metricsPorts = [await freePort(), await freePort()];
      for (const port of metricsPorts)
        spawnWorker(h, taskQueue, { ...env, RECON_METRICS_PORT: String(port) });
      try {
        const range = { from: '2026-01-01', to: '2026-03-10' };
        const { handle } = await startBackfill(server.client, {
          ...range,
          taskQueue,
          windowDays: 10,
          parallelism: 7,
        });
        await handle.result();
        const starts = await activityStarts(splitWindows(range.from, range.to, 10));
        const identities = new Set(starts.map((s) => s.identity));
        const afterBurst = starts.filter((s) => s.at >= starts[0]!.at + 1000);
        const rate = afterBurst.length / ((starts.at(-1)!.at - starts[0]!.at - 1000) / 1000);
        expect(identities.size).toBe(2);
        expect(rate).toBeLessThanOrEqual(perSecond * 1.25);

        // /metrics of both workers: their counts add up to what the warehouse recorded.
        const scrapes = await Promise.all(
          metricsPorts.map(async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
        );
        const loaded = await sql<{ source: string; rows: number }>`
        select source, sum(rows_loaded)::int as rows from loads where status = 'committed' group by source`.execute(
          h.db,
        );
        expect(loaded.rows.length).toBe(5);
        for (const { source, rows } of loaded.rows) {
          const counted = scrapes.map((text) => sample(text, 'recon_rows_loaded_total', { source }) ?? 0);
          expect(counted[0]! + counted[1]!).toBe(rows);
        }
        const open = await sql<{ kind: string; currency: string; n: number }>`
        select kind, coalesce(currency, 'none') as currency, count(*)::int as n from discrepancies
        where status = 'open' group by 1, 2`.execute(h.db);
        expect(open.rows.length).toBeGreaterThan(0);
        for (const scrape of scrapes) {
          for (const { kind, currency, n } of open.rows)
            expect(sample(scrape, 'recon_open_discrepancies', { kind, currency, status: 'open' })).toBe(n);
          expect(sample(scrape, 'recon_warehouse_up', {})).toBe(1);
          expect(
            sample(scrape, 'recon_last_successful_pull_timestamp_seconds', { source: 'report-transactions' }),
          ).toBeGreaterThan(Date.now() / 1000 - 600);
          // The Temporal SDK's own runtime metrics, served through the same endpoint.
          expect(scrape).toMatch(/^temporal_activity_execution_latency/m);
        }
        const reportRequests = scrapes.map(
          (text) => sample(text, 'recon_provider_requests_total', { endpoint: 'report', status: '200' }) ?? 0,
        );
        expect(reportRequests[0]! + reportRequests[1]!).toBeGreaterThanOrEqual(14); // 7 windows x 2 report sources
      } finally {
        for (const w of workerProcesses) await reap(w);
      }
    },
    WORKER_PROCESS_TEST_MS,
  );
});
