import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../activities/index.ts';
import { buildWorkflowBundle } from './workflow-bundle.ts';
import type { WorkerSettings } from './worker-settings.ts';

export interface ReconWorkerOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly activities: Activities;
  readonly settings: WorkerSettings;
  /** A prebuilt bundle (tests build one per run); by default the process bundles workflows/ once. */
  readonly workflowBundle?: { codePath: string } | { code: string };
}

/**
 * A worker for the recon task queue: the bundled workflows, the given activities, the concurrency
 * and the per-queue activity rate (the provider's quota) of `settings`. The caller runs it; the SDK
 * shuts it down gracefully on SIGINT/SIGTERM (activities get `shutdownGraceSeconds` to finish,
 * then are cancelled and retried elsewhere).
 */
export async function createReconWorker(options: ReconWorkerOptions): Promise<Worker> {
  const workflowBundle = options.workflowBundle ?? { code: (await buildWorkflowBundle()).code };
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle,
    activities: options.activities,
    maxConcurrentActivityTaskExecutions: options.settings.maxConcurrentActivityTaskExecutions,
    maxConcurrentWorkflowTaskExecutions: options.settings.maxConcurrentWorkflowTaskExecutions,
    maxTaskQueueActivitiesPerSecond: options.settings.maxTaskQueueActivitiesPerSecond,
    shutdownGraceTime: options.settings.shutdownGraceSeconds * 1000,
  });
}
