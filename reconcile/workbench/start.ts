/**
 * Starts the workbench on a port: its own small pool, whose statements and lock waits are bounded so
 * that no workbench request can hold up a load or a reconcile run for longer than that.
 */
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createDatabase, createPool, openDatabase } from '../../db/connect.ts';
import type { Config } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { temporalScheduleReader } from './queries/schedule.ts';
import { buildWorkbench, type WorkbenchOptions } from './server.ts';

/** Longest a workbench statement runs, and longest it waits for a row lock (milliseconds). */
export const STATEMENT_TIMEOUT_MS = 30_000;
export const LOCK_TIMEOUT_MS = 5_000;

export interface RunningWorkbench {
  readonly url: string;
  close(): Promise<void>;
}

export async function startWorkbench(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'temporalAddress' | 'temporalNamespace'>,
  options: Omit<WorkbenchOptions, 'db'> & { port: number; host: string },
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
  const app = await buildWorkbench({
    schedule: temporalScheduleReader(config),
    ...options,
    db,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await app.listen({ port: options.port, host: options.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `${options.https ? 'https' : 'http'}://${host}:${port}/`,
    close: async () => {
      await app.close();
      await db.destroy();
      await opened.close();
    },
  };
}
