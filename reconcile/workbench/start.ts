/**
 * Starts the workbench on a port: its own small pool, whose statements and lock waits are bounded so
 * that no workbench request can hold up a load or a reconcile run for longer than that. With
 * `metricsAt` (RECON_METRICS_PORT), the same metrics are also served without sign-in on a port of
 * their own, as the worker and the receiver do.
 */
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createDatabase, createPool, openDatabase } from '../../db/connect.ts';
import type { Config } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { createWorkbenchMetrics } from '../../observability/workbench-metrics.ts';
import { type MetricsServer, startMetricsServer } from '../../observability/serve-metrics.ts';
import { temporalScheduleReader } from './queries/schedule.ts';
import { buildWorkbench, type WorkbenchOptions } from './server.ts';

/** Longest a workbench statement runs, and longest it waits for a row lock (milliseconds). */
export const STATEMENT_TIMEOUT_MS = 30_000;
export const LOCK_TIMEOUT_MS = 5_000;

export interface RunningWorkbench {
  readonly url: string;
  /** `GET /metrics` on RECON_METRICS_PORT, when it was asked for. */
  readonly metricsUrl?: string;
  close(): Promise<void>;
}

export async function startWorkbench(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'temporalAddress' | 'temporalNamespace'>,
  options: Omit<WorkbenchOptions, 'db' | 'metrics'> & {
    port: number;
    host: string;
    metricsAt?: { host: string; port: number };
  },
): Promise<RunningWorkbench> {
  const opened: DatabaseHandle = await openDatabase(config, { poolSize: 1 });
  // A pool of its own with bounded statements; the handle above only keeps the embedded server.
  const pool = createPool(opened.connectionString, 10);
  pool.on('connect', (client) => {
    client
      .query(`set statement_timeout = ${STATEMENT_TIMEOUT_MS}; set lock_timeout = ${LOCK_TIMEOUT_MS}`)
      .catch(() => {});
  });
  const db = createDatabase(pool);
  try {
    await sql`select 1 from workbench_users limit 0`.execute(db);
  } catch (error) {
    await db.destroy();
    await opened.close();
    if ((error as { code?: string }).code === '42P01')
      throw new ConfigError('the warehouse has no workbench tables: run recon migrate first');
    throw error;
  }
  const { metricsAt, ...workbenchOptions } = options;
  const metrics = createWorkbenchMetrics({ db });
  const app = await buildWorkbench({
    schedule: temporalScheduleReader(config),
    ...workbenchOptions,
    db,
    metrics,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  let metricsServer: MetricsServer | undefined;
  try {
    await app.listen({ port: options.port, host: options.host });
    if (metricsAt) metricsServer = await startMetricsServer({ metrics, ...metricsAt });
  } catch (error) {
    await app.close();
    await db.destroy();
    await opened.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `${options.https ? 'https' : 'http'}://${host}:${port}/`,
    ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
    close: async () => {
      await metricsServer?.close();
      await app.close();
      await db.destroy();
      await opened.close();
    },
  };
}
