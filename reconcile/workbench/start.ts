/**
 * Starts the workbench on a port: its own small pool, whose statements and lock waits are bounded so
 * that no workbench request can hold up a load or a reconcile run for longer than that. With
 * RECON_WORKBENCH_READ_URL, a second pool on the replica for the heavy reads (replica-reads.ts); it is
 * not checked here: a replica that is down when the server starts is read around like one that goes
 * down later.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import { databaseAddress } from '../../db/connection-errors.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createDatabase, createPool, openDatabase } from '../../db/connect.ts';
import type { Config } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { temporalScheduleReader } from './queries/schedule.ts';
import { buildWorkbench, type WorkbenchOptions } from './server.ts';

/** Longest a workbench statement runs, and longest it waits for a row lock (milliseconds). */
export const STATEMENT_TIMEOUT_MS = 30_000;
export const LOCK_TIMEOUT_MS = 5_000;
/** Longest a read waits to connect to the replica before it reads the primary instead. */
export const REPLICA_CONNECT_TIMEOUT_MS = 3_000;

export interface RunningWorkbench {
  readonly url: string;
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
  options: Omit<WorkbenchOptions, 'db' | 'readReplica'> & { port: number; host: string },
): Promise<RunningWorkbench> {
  const opened: DatabaseHandle = await openDatabase(config, { poolSize: 1 });
  // A pool of its own with bounded statements; the handle above only keeps the embedded server.
  const db = createDatabase(boundStatements(createPool(opened.connectionString, 10)));
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
  try {
    await sql`select 1 from workbench_users limit 0`.execute(db);
  } catch (error) {
    await db.destroy();
    await replica?.db.destroy();
    await opened.close();
    if ((error as { code?: string }).code === '42P01')
      throw new ConfigError('the warehouse has no workbench tables: run recon migrate first');
    throw error;
  }
  const app = await buildWorkbench({
    schedule: temporalScheduleReader(config),
    ...options,
    db,
    ...(replica ? { readReplica: replica } : {}),
    log,
  });
  if (replica) log(`workbench: worklist, CSV, runs, loads and coverage read the replica ${replica.address}`);
  await app.listen({ port: options.port, host: options.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `${options.https ? 'https' : 'http'}://${host}:${port}/`,
    close: async () => {
      await app.close();
      await db.destroy();
      await replica?.db.destroy();
      await opened.close();
    },
  };
}
