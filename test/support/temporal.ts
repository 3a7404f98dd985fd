import { randomBytes } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { type Activities } from '../../activities/index.ts';
import { startDevServer, type DevServer } from '../../workers/dev-server.ts';
import { installRuntime } from '../../workers/runtime.ts';
import { createProviderQueueWorkers, createReconWorker } from '../../workers/create-worker.ts';

export type { DevServer } from '../../workers/dev-server.ts';

/** A real Temporal dev server for one test file (in memory, 127.0.0.1). */
export function startTestTemporal(): Promise<DevServer> {
  installRuntime({ level: 'ERROR' });
  return startDevServer();
}

export function uniqueTaskQueue(name: string): string {
  return `${name}-${randomBytes(4).toString('hex')}`;
}

export interface RunningWorker {
  readonly worker: Worker;
  /** Resolves (or rejects) when the worker stops. */
  readonly done: Promise<void>;
  /** Graceful shutdown, as on SIGTERM; waits for the worker to stop. */
  stop(): Promise<void>;
}

/** A real worker with the run's prebuilt workflow bundle and the given activities. */
export async function startTestWorker(
  server: DevServer,
  taskQueue: string,
  activities: Activities,
  options: {
    activitiesPerSecond?: number;
    shutdownGraceSeconds?: number;
    /** Also poll these accounts' provider queues (workflows/task-queues.ts); default: `default`'s. */
    accounts?: readonly string[];
  } = {},
): Promise<RunningWorker> {
  const common = {
    connection: server.nativeConnection,
    namespace: server.namespace,
    taskQueue,
    activities,
    settings: {
      maxConcurrentActivityTaskExecutions: 10,
      maxConcurrentWorkflowTaskExecutions: 40,
      maxTaskQueueActivitiesPerSecond: options.activitiesPerSecond ?? 1000,
      shutdownGraceSeconds: options.shutdownGraceSeconds ?? 1,
    },
  };
  const worker = await createReconWorker({
    ...common,
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  const providers = await createProviderQueueWorkers({
    ...common,
    accounts: options.accounts ?? ['default'],
  });
  const done = Promise.all([worker.run(), ...providers.map((p) => p.run())]).then(() => {});
  return {
    worker,
    done,
    stop: async () => {
      for (const w of [worker, ...providers]) if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    },
  };
}
