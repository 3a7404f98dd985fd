import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../activities/index.ts';
import { providerTaskQueue } from '../workflows/task-queues.ts';
import { buildWorkflowBundle } from './workflow-bundle.ts';
import type { WorkerSettings } from '../config/worker.ts';

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

/**
 * One activity-only worker per provider account (its pulls and its status follow-up), on the account's own task queue
 * (workflows/task-queues.ts): the queue's rate limit, enforced by the server across every worker
 * that polls it, is the account's provider quota (`maxTaskQueueActivitiesPerSecond` of `settings`).
 * Every worker process polls the queue of each account it is configured with.
 */
export async function createProviderQueueWorkers(
  options: Omit<ReconWorkerOptions, 'workflowBundle'> & { readonly accounts: readonly string[] },
): Promise<Worker[]> {
  return Promise.all(
    options.accounts.map((account) =>
      Worker.create({
        connection: options.connection,
        namespace: options.namespace,
        taskQueue: providerTaskQueue(options.taskQueue, account),
        activities: {
          pullSource: options.activities.pullSource,
          followUpNonFinal: options.activities.followUpNonFinal,
        },
        maxConcurrentActivityTaskExecutions: options.settings.maxConcurrentActivityTaskExecutions,
        maxTaskQueueActivitiesPerSecond: options.settings.maxTaskQueueActivitiesPerSecond,
        shutdownGraceTime: options.settings.shutdownGraceSeconds * 1000,
      }),
    ),
  );
}

/**
 * The workflow worker and the provider-queue workers of `accounts`, created together. `run` runs
 * them all until they stop (SIGINT/SIGTERM through the runtime, or `shutdown`); `shutdown` is
 * graceful and safe to call twice.
 */
export async function createReconWorkers(
  options: ReconWorkerOptions & { readonly accounts: readonly string[] },
): Promise<{ workers: Worker[]; run(): Promise<void>; shutdown(): void }> {
  const main = await createReconWorker(options);
  const providers = await createProviderQueueWorkers(options);
  const workers = [main, ...providers];
  return {
    workers,
    run: async () => {
      // One worker failing stops the others, so the process never serves a part of the queues.
      const runs = workers.map((w) =>
        w.run().catch((error: unknown) => {
          for (const other of workers) if (other.getState() === 'RUNNING') other.shutdown();
          throw error;
        }),
      );
      await Promise.all(runs);
    },
    shutdown: () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}
