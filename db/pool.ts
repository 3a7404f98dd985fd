import pg from 'pg';
import { noteConnected, noteDatabase } from './connection-errors.ts';
import { acquireWarehouse, applicationName, type WarehouseLease } from './embedded-warehouse.ts';
import { ensureSchema } from './ensure-schema.ts';
import { DEFAULT_DB_TIMEOUT_SECONDS, startWatchdog, trackClient } from './watchdog.ts';

// The warehouse's connections without Kysely (db/connect.ts adds it): a load writes through
// node-postgres alone, and `recon import` so starts without Kysely's 255 modules, about 0.1 s of
// CPU before its first row (docs/benchmark-record.md §3).

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

/** The warehouse opened without Kysely: its pool, for node-postgres and COPY streams. */
export interface PoolHandle {
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

/** Where the warehouse is: its URL, or the data directory of the embedded one. */
export interface WarehouseLocation {
  /** An external PostgreSQL (`DATABASE_URL`); undefined for the embedded warehouse. */
  readonly databaseUrl?: string | undefined;
  /** The project data directory that holds the embedded warehouse. */
  readonly dataDir: string;
  /** How long a watched command waits for a silent database (RECON_DB_TIMEOUT_SECONDS); default 60. */
  readonly dbTimeoutSeconds?: number | undefined;
}

export interface OpenOptions {
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
}

/**
 * Opens the warehouse's pool: `DATABASE_URL` when set, else the embedded PostgreSQL in the project
 * data directory, the one already running there if any. The caller closes the handle; closing stops
 * the embedded server when nothing else uses it and `recon warehouse start` did not start it.
 * `watch` (commands a person waits for): say on stderr when the server stops answering, and give up
 * after RECON_DB_TIMEOUT_SECONDS (db/watchdog.ts).
 */
export async function openPool(config: WarehouseLocation, options: OpenOptions = {}): Promise<PoolHandle> {
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
  const watchdog = options.watch ? startWatchdog(connectionString, { timeoutSeconds }) : undefined;
  const close = async () => {
    await watchdog?.stop();
    await pool.end();
    await lease?.release();
  };
  if ((options.schema ?? 'ensure') === 'ensure') {
    try {
      await ensureSchema(pool, { embedded: lease !== undefined, connectionString });
    } catch (error) {
      await close();
      throw error;
    }
  }
  return { pool, connectionString, close };
}
