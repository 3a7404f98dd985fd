import { rmSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from './database.ts';
import { createDatabase } from './database-on-client.ts';
import { acquireWarehouse, stopWarehouse, warehousePaths } from './embedded-warehouse.ts';
import { type OpenOptions, openPool, type PoolHandle, type WarehouseLocation } from './pool.ts';

export interface DatabaseHandle extends PoolHandle {
  readonly db: Kysely<Database>;
}

export interface EmbeddedServer {
  readonly connectionString: string;
  stop(): Promise<void>;
}

/**
 * Starts (or joins) the embedded PostgreSQL whose data lives in `dataDir` (db/embedded-warehouse.ts).
 * `persistent: false` (tests, benchmarks): stop() stops the server at once and deletes its data.
 * Otherwise stop() leaves it to the rules of a shared server: a session server keeps running, any
 * other stops when its last user is done.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { persistent?: boolean; log?: (message: unknown) => void } = {},
): Promise<EmbeddedServer> {
  const lease = await acquireWarehouse(dataDir, options.log ? { log: options.log } : {});
  return {
    connectionString: lease.connectionString,
    stop: async () => {
      if (options.persistent ?? true) return lease.release();
      await stopWarehouse(dataDir, { mode: 'fast' });
      rmSync(warehousePaths(dataDir).pgDir, { recursive: true, force: true });
    },
  };
}

/**
 * {@link openPool} with Kysely on its pool (`db`): for the commands that query through Kysely. A load
 * needs only the pool (ingest/load/load-rows.ts).
 */
export async function openDatabase(
  config: WarehouseLocation,
  options: OpenOptions = {},
): Promise<DatabaseHandle> {
  const handle = await openPool(config, options);
  // The pool is the handle's: closing it ends the pool, as Kysely's destroy() would.
  return { ...handle, db: createDatabase(handle.pool) };
}
