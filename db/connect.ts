import { rmSync } from 'node:fs';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { noteConnected, noteDatabase } from './connection-errors.ts';
import type { Database } from './database.ts';
import {
  acquireWarehouse,
  applicationName,
  stopWarehouse,
  type WarehouseLease,
  warehousePaths,
} from './embedded-warehouse.ts';
import { ensureSchema } from './migrate.ts';
import { DEFAULT_DB_TIMEOUT_SECONDS, startWatchdog, trackClient } from './watchdog.ts';

const INT8_OID = 20;
const DATE_OID = 1082;
const TIMESTAMP_OID = 1114;
const TIMESTAMPTZ_OID = 1184;

/**
 * bigint columns hold cents and counts. They are parsed as exact integers and refused beyond 2^53
 * rather than rounded through floating point. Timestamps and dates stay strings: a JavaScript Date
 * would drop the microseconds of the report's timestamps, and a date would pick up the host's zone.
 */
export function configurePgTypes(): void {
  pg.types.setTypeParser(INT8_OID, (value: string) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n))
      throw new RangeError(`bigint ${value} does not fit a safe JavaScript integer`);
    return n;
  });
  pg.types.setTypeParser(DATE_OID, (value: string) => value);
  pg.types.setTypeParser(TIMESTAMP_OID, (value: string) => value);
  pg.types.setTypeParser(TIMESTAMPTZ_OID, (value: string) => value);
}

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  /** The pool behind `db`, for COPY streams (pg-copy-streams needs a raw client). */
  readonly pool: pg.Pool;
  readonly connectionString: string;
  /** Closes the pool and stops the embedded server when this handle started it. */
  close(): Promise<void>;
}

export function createPool(
  connectionString: string,
  max = 10,
  options: { connectionTimeoutMillis?: number } = {},
): pg.Pool {
  configurePgTypes();
  // Sessions run in UTC so that timestamptz text is always +00, whatever the server's default.
  // application_name tells this process's sessions from other clients (db/embedded-warehouse.ts).
  const pool = new pg.Pool({
    connectionString,
    max,
    options: '-c TimeZone=UTC',
    application_name: applicationName(),
    ...options,
  });
  // An IDLE pooled connection can die under us (server restart, pg_terminate_backend, DROP DATABASE
  // ... WITH (FORCE), an embedded server stopped by Ctrl-C): pg-pool then discards it and the next
  // query opens a new one. Without a listener, pg.Pool rethrows that as an uncaught exception and the
  // process dies. Errors of connections in use still reach the query that uses them.
  pool.on('error', () => {});
  // A connection that dies while checked out (a COPY stream's, a transaction's) emits 'error' on its
  // client, which has no listener of pg-pool's then: without this one, a server crash in the middle of
  // a load killed the process with a stack trace. The query that used it fails with the error anyway.
  pool.on('connect', (client) => {
    noteConnected();
    client.on('error', () => {});
    trackClient(client);
  });
  return pool;
}

export function createDatabase(pool: pg.Pool): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
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

/** Where the warehouse is: its URL, or the data directory of the embedded one. */
export interface WarehouseLocation {
  /** An external PostgreSQL (`DATABASE_URL`); undefined for the embedded warehouse. */
  readonly databaseUrl?: string | undefined;
  /** The project data directory that holds the embedded warehouse. */
  readonly dataDir: string;
  /** How long a watched command waits for a silent database (RECON_DB_TIMEOUT_SECONDS); default 60. */
  readonly dbTimeoutSeconds?: number | undefined;
}

/**
 * Opens the warehouse: `DATABASE_URL` when set, else the embedded PostgreSQL in the project data
 * directory, the one already running there if any. The caller closes the handle; closing stops the
 * embedded server when nothing else uses it and `recon warehouse start` did not start it.
 * `watch` (commands a person waits for): say on stderr when the server stops answering, and give up
 * after RECON_DB_TIMEOUT_SECONDS (db/watchdog.ts).
 */
export async function openDatabase(
  config: WarehouseLocation,
  options: {
    poolSize?: number;
    /**
     * `ensure` (default): the schema must be migrated; the embedded warehouse is migrated here, an
     * external one that is not refuses the command (run `recon migrate`). `as-is`: no check (recon
     * migrate itself, scratch databases).
     */
    schema?: 'ensure' | 'as-is';
    watch?: boolean;
    /**
     * A long-running process that stops on its own signals (`recon serve`, `recon notifications
     * serve`, `recon worker`): an embedded server it starts does not take the terminal's Ctrl-C, which
     * would stop it under a `recon warehouse start` that took it over meanwhile (db/embedded-warehouse.ts).
     */
    longRunning?: boolean;
  } = {},
): Promise<DatabaseHandle> {
  let lease: WarehouseLease | undefined;
  let connectionString = config.databaseUrl;
  if (connectionString === undefined) {
    lease = await acquireWarehouse(config.dataDir, options.longRunning ? { detach: true } : {});
    connectionString = lease.connectionString;
  }
  noteDatabase(connectionString);
  const timeoutSeconds = config.dbTimeoutSeconds ?? DEFAULT_DB_TIMEOUT_SECONDS;
  const pool = createPool(
    connectionString,
    options.poolSize,
    options.watch ? { connectionTimeoutMillis: timeoutSeconds * 1000 } : {},
  );
  const db = createDatabase(pool);
  const watchdog = options.watch ? startWatchdog(connectionString, { timeoutSeconds }) : undefined;
  const close = async () => {
    await watchdog?.stop();
    await db.destroy();
    await lease?.release();
  };
  if ((options.schema ?? 'ensure') === 'ensure') {
    try {
      await ensureSchema(db, { embedded: lease !== undefined, connectionString });
    } catch (error) {
      await close();
      throw error;
    }
  }
  return { db, pool, connectionString, close };
}
