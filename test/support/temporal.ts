import { randomBytes } from 'node:crypto';
import type { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { type Activities } from '../../activities/index.ts';
import { startDevServer, type DevServer } from '../../workers/dev-server.ts';
import { installRuntime } from '../../workers/runtime.ts';
import { createReconWorker } from '../../workers/create-worker.ts';

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
  options: { activitiesPerSecond?: number; shutdownGraceSeconds?: number } = {},
): Promise<RunningWorker> {
  const worker = await createReconWorker({
    connection: server.nativeConnection,
    namespace: server.namespace,
    taskQueue,
    activities,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    settings: {
      maxConcurrentActivityTaskExecutions: 10,
      maxConcurrentWorkflowTaskExecutions: 40,
      maxTaskQueueActivitiesPerSecond: options.activitiesPerSecond ?? 1000,
      shutdownGraceSeconds: options.shutdownGraceSeconds ?? 1,
    },
  });
  const done = worker.run();
  return {
    worker,
    done,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
