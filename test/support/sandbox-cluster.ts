import { afterAll, beforeAll } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../sandbox/server.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import { createTestDatabase } from './database.ts';
import { recon, type ReconRun } from './recon-process.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from './temporal.ts';

/**
 * A test file's cluster as an operator's commands meet it: a real Temporal dev server, the sandbox
 * provider, a test database and a worker with the production activities over them (the worker's
 * configuration is the sandbox's, plus `env`), started before the file's first test and stopped after
 * its last. `recon(args)` runs the CLI in a child process against that cluster (TEMPORAL_ADDRESS and
 * the worker's task queue). The members may be read inside tests and hooks only.
 */
export interface SandboxCluster {
  readonly server: DevServer;
  readonly sandbox: Sandbox;
  readonly h: DatabaseHandle;
  readonly taskQueue: string;
  recon(args: string[], timeoutMs?: number): Promise<ReconRun>;
}

export function useSandboxCluster(options: {
  /** Names the task queue (uniqueTaskQueue). */
  readonly name: string;
  readonly sandbox: SandboxOptions;
  /** Settings of the worker beyond the sandbox's (e.g. RECON_MAX_REJECTED_PER_WINDOW). */
  readonly env?: Record<string, string>;
  readonly poolSize?: number;
  /** The activities the worker runs, from the production ones (a test's fault in one). */
  readonly activities?: (production: Activities) => Activities;
  /** The CLI's time limit per command (default 90 s). */
  readonly timeoutMs?: number;
}): SandboxCluster {
  const taskQueue = uniqueTaskQueue(options.name);
  let started: { server: DevServer; sandbox: Sandbox; h: DatabaseHandle } | undefined;
  const stops: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    const [server, sandbox, h] = await Promise.all([
      startTestTemporal(),
      startSandbox(options.sandbox),
      createTestDatabase(options.poolSize ?? 8),
    ]);
    started = { server, sandbox, h };
    stops.push(
      () => h.close(),
      () => server.close(),
      () => sandbox.close(),
    );
    const opened = openProductionActivities(loadConfig({ ...sandbox.env(), ...options.env }), h);
    stops.push(opened.close);
    const activities = options.activities?.(opened.activities) ?? opened.activities;
    const worker = await startTestWorker(server, taskQueue, activities);
    stops.push(() => worker.stop());
  });
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });
  const get = () => {
    if (!started) throw new Error('the cluster starts in beforeAll: read it inside a test or hook');
    return started;
  };
  return {
    get server() {
      return get().server;
    },
    get sandbox() {
      return get().sandbox;
    },
    get h() {
      return get().h;
    },
    taskQueue,
    recon(args, timeoutMs) {
      const { server, sandbox, h } = get();
      return recon(
        h.connectionString,
        args,
        { ...sandbox.env(), TEMPORAL_ADDRESS: server.address, TEMPORAL_TASK_QUEUE: taskQueue },
        { timeoutMs: timeoutMs ?? options.timeoutMs ?? 90_000 },
      );
    },
  };
}
