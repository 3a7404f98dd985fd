/**
 * Starts the workbench on a port: its own small pool, whose statements and lock waits are bounded so
 * that no workbench request can hold up a load or a reconcile run for longer than that. With
 * RECON_WORKBENCH_READ_URL, a second pool on the replica for the heavy reads (replica-reads.ts); it is
 * not checked here: a replica that is down when the server starts is read around like one that goes
 * down later. With `metricsAt` (RECON_METRICS_PORT), the same metrics are also served without sign-in
 * on a port of their own, as the worker and the receiver do.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import { databaseAddress } from '../db/connection-errors.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import { openDatabase } from '../db/connect.ts';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../domain/errors.ts';
import { createWorkbenchMetrics } from '../observability/workbench-metrics.ts';
import { type MetricsServer, startMetricsServer } from '../observability/serve-metrics.ts';
import { temporalScheduleReader } from './queries/schedule.ts';
import { buildWorkbench, type WorkbenchOptions } from './server.ts';

/** Longest a workbench statement runs, and longest it waits for a row lock (milliseconds). */
export const STATEMENT_TIMEOUT_MS = 30_000;
export const LOCK_TIMEOUT_MS = 5_000;
/** Longest a read waits to connect to the replica before it reads the primary instead. */
export const REPLICA_CONNECT_TIMEOUT_MS = 3_000;

export interface RunningWorkbench {
  readonly url: string;
  /** `GET /metrics` on RECON_METRICS_PORT, when it was asked for. */
  readonly metricsUrl?: string;
  close(): Promise<void>;
}

function boundStatements(pool: pg.Pool): pg.Pool {
  pool.on('connect', (client) => {
    client
      .query(`set statement_timeout = ${STATEMENT_TIMEOUT_MS}; set lock_timeout = ${LOCK_TIMEOUT_MS}`)
      .catch(() => {});
  });
  return pool;
}

export async function startWorkbench(
  config: Pick<
    Config,
    'databaseUrl' | 'dataDir' | 'temporalAddress' | 'temporalNamespace' | 'workbenchReadUrl'
  >,
  options: Omit<WorkbenchOptions, 'db' | 'readReplica' | 'metrics' | 'previewDb'> & {
    port: number;
    host: string;
    metricsAt?: { host: string; port: number };
  },
): Promise<RunningWorkbench> {
  const opened: DatabaseHandle = await openDatabase(config, { poolSize: 1, longRunning: true });
  // A pool of its own with bounded statements; the handle above only keeps the embedded server.
  const db = createDatabase(boundStatements(createPool(opened.connectionString, 10)));
  // Previews of tolerances are reconcile runs over the whole history: one connection of their own,
  // without the 30 s bound of the pages' statements (one preview runs at a time: preview-jobs.ts).
  const previewDb = createDatabase(createPool(opened.connectionString, 1));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const readUrl = config.workbenchReadUrl;
  const replica = readUrl
    ? {
        db: createDatabase(
          boundStatements(createPool(readUrl, 10, { connectionTimeoutMillis: REPLICA_CONNECT_TIMEOUT_MS })),
        ),
        address: databaseAddress(readUrl),
      }
    : undefined;
  const closeDatabases = async () => {
    await db.destroy();
    await previewDb.destroy();
    await replica?.db.destroy();
    await opened.close();
  };
  try {
    await sql`select 1 from workbench_users limit 0`.execute(db);
  } catch (error) {
    await closeDatabases();
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
    ...(replica ? { readReplica: replica } : {}),
    previewDb,
    metrics,
    log,
  });
  if (replica) log(`workbench: worklist, CSV, runs, loads and coverage read the replica ${replica.address}`);
  let metricsServer: MetricsServer | undefined;
  try {
    await app.listen({ port: options.port, host: options.host });
    if (metricsAt) metricsServer = await startMetricsServer({ metrics, ...metricsAt });
  } catch (error) {
    await app.close();
    await closeDatabases();
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
      await closeDatabases();
    },
  };
}
