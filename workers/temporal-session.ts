import { resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import type { Activities } from '../activities/index.ts';
import type { Config } from '../config/config.ts';
import { startDevServer } from './dev-server.ts';
import { reachTemporal } from './reach-temporal.ts';
import { createReconWorkers } from './create-worker.ts';
import { loadWorkerSettings } from '../config/worker.ts';

/** A client to Temporal for one command, with the in-process worker when Temporal is embedded. */
export interface TemporalSession {
  readonly client: Client;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly address: string;
  /** True when this command started the dev server (TEMPORAL_ADDRESS unset). */
  readonly embedded: boolean;
  readonly uiUrl: string | null;
  /** Stops the in-process worker (gracefully), then the dev server. Safe to call twice. */
  close(): Promise<void>;
}

/** Where the embedded dev server keeps its state, so a later command re-attaches to its workflows. */
export function embeddedTemporalDbFile(config: Pick<Config, 'dataDir'>): string {
  return resolve(config.dataDir, 'temporal', 'dev-server.sqlite');
}

/**
 * Opens Temporal for a command. With TEMPORAL_ADDRESS set: a client to that cluster, whose workers
 * do the work. Unset: an ephemeral dev server on 127.0.0.1 (state in `dbFile` when given, else in
 * memory) and an in-process worker with the activities `openActivities` builds, both for the length
 * of the command.
 */
export async function openTemporalSession(
  config: Config,
  options: {
    /** The in-process worker's activities, and the accounts whose provider queues it polls (default: `default`). */
    openActivities: () => Promise<{
      activities: Activities;
      accounts?: readonly string[];
      close(): Promise<void>;
    }>;
    dbFile?: string;
    ui?: boolean;
    env?: NodeJS.ProcessEnv;
    /** Also run an in-process worker against a cluster (the demo: only this process reaches its sandbox). */
    workerWithCluster?: boolean;
    /** Task queue instead of TEMPORAL_TASK_QUEUE. */
    taskQueue?: string;
  },
): Promise<TemporalSession> {
  const taskQueue = options.taskQueue ?? config.temporalTaskQueue;
  if (config.temporalAddress && options.workerWithCluster) {
    const address = config.temporalAddress;
    const nativeConnection = await reachTemporal(address, () => NativeConnection.connect({ address }));
    const connection = await reachTemporal(address, () => Connection.connect({ address }));
    const opened = await options.openActivities();
    const worker = await createReconWorkers({
      connection: nativeConnection,
      namespace: config.temporalNamespace,
      taskQueue,
      activities: opened.activities,
      accounts: opened.accounts ?? [DEFAULT_ACCOUNT],
      settings: { ...loadWorkerSettings(options.env), shutdownGraceSeconds: 5 },
    });
    const running = worker.run();
    let closed: Promise<void> | undefined;
    return {
      client: new Client({ connection, namespace: config.temporalNamespace }),
      namespace: config.temporalNamespace,
      taskQueue,
      address: config.temporalAddress,
      embedded: false,
      uiUrl: null,
      close: () =>
        (closed ??= (async () => {
          worker.shutdown();
          await running.catch(() => {});
          await opened.close();
          await nativeConnection.close();
          await connection.close();
        })()),
    };
  }
  if (config.temporalAddress) {
    const address = config.temporalAddress;
    const connection = await reachTemporal(address, () => Connection.connect({ address }));
    const client = new Client({ connection, namespace: config.temporalNamespace });
    let closed: Promise<void> | undefined;
    return {
      client,
      namespace: config.temporalNamespace,
      taskQueue,
      address: config.temporalAddress,
      embedded: false,
      uiUrl: null,
      close: () => (closed ??= connection.close()),
    };
  }
  const server = await startDevServer({
    ...(options.dbFile ? { dbFile: options.dbFile } : {}),
    ui: options.ui ?? false,
    namespace: config.temporalNamespace,
  });
  let worker: { shutdown(): void } | undefined;
  let running: Promise<void> | undefined;
  let activities: { close(): Promise<void> } | undefined;
  try {
    const opened = await options.openActivities();
    activities = opened;
    const workers = await createReconWorkers({
      connection: server.nativeConnection,
      namespace: server.namespace,
      taskQueue,
      activities: opened.activities,
      accounts: opened.accounts ?? [DEFAULT_ACCOUNT],
      settings: { ...loadWorkerSettings(options.env), shutdownGraceSeconds: 5 },
    });
    worker = workers;
    running = workers.run();
  } catch (error) {
    await activities?.close();
    await server.close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  const close = async () => {
    worker?.shutdown();
    await running?.catch(() => {});
    await activities?.close();
    await server.close();
  };
  return {
    client: server.client,
    namespace: server.namespace,
    taskQueue,
    address: server.address,
    embedded: true,
    uiUrl: server.uiUrl,
    close: () => (closed ??= close()),
  };
}
