import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from './embedded-postgres.ts';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../lib/config.ts';
import { noteConnected, noteDatabase } from './connection-errors.ts';
import type { Database } from './database.ts';
import { dbTimeoutSeconds, startWatchdog, trackClient } from './watchdog.ts';

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
  const pool = new pg.Pool({ connectionString, max, options: '-c TimeZone=UTC', ...options });
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

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function canConnect(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export interface EmbeddedServer {
  readonly connectionString: string;
  stop(): Promise<void>;
}

/**
 * Starts (or joins) the embedded PostgreSQL whose data lives in `dataDir`, kept between runs. When
 * another command of this project already runs it, this one connects to that server and leaves it
 * running. As root, PostgreSQL refuses to run, so the package creates a `postgres` user for it.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { persistent?: boolean; log?: (message: unknown) => void } = {},
): Promise<EmbeddedServer> {
  const dir = resolve(dataDir, 'postgres');
  const portFile = resolve(dataDir, 'postgres.port');
  const user = 'postgres';
  const password = 'postgres';
  const urlFor = (port: number) => `postgres://${user}:${password}@127.0.0.1:${port}/postgres`;

  if (existsSync(portFile)) {
    const port = Number(readFileSync(portFile, 'utf8').trim());
    if (port > 0 && (await canConnect(urlFor(port)))) {
      return { connectionString: urlFor(port), stop: async () => {} };
    }
  }
  mkdirSync(resolve(dataDir), { recursive: true });
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user,
    password,
    port,
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'fsync=on', '-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'],
    onLog: options.log ?? (() => {}),
    onError: options.log ?? (() => {}),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await server.initialise();
  else await removeStalePid(dir);
  await server.start();
  writeFileSync(portFile, `${port}\n`);
  return {
    connectionString: urlFor(port),
    stop: async () => {
      await server.stop();
    },
  };
}

async function removeStalePid(dir: string): Promise<void> {
  // A postmaster.pid left by a killed run blocks the next start; it is stale since we could not connect.
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  let alive: boolean;
  try {
    process.kill(pid, 0);
    alive = true;
  } catch {
    alive = false;
  }
  if (!alive) {
    const { rmSync } = await import('node:fs');
    rmSync(pidFile, { force: true });
  }
}

/**
 * Opens the warehouse: `DATABASE_URL` when set, else the embedded PostgreSQL in the project data
 * directory. The caller closes the handle; closing stops the embedded server this call started.
 * `watch` (commands a person waits for): say on stderr when the server stops answering, and give up
 * after RECON_DB_TIMEOUT_SECONDS (db/watchdog.ts).
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
  options: { poolSize?: number; watch?: boolean } = {},
): Promise<DatabaseHandle> {
  let embedded: EmbeddedServer | undefined;
  let connectionString = config.databaseUrl;
  if (connectionString === undefined) {
    embedded = await startEmbeddedPostgres(config.dataDir);
    connectionString = embedded.connectionString;
  }
  noteDatabase(connectionString);
  const timeoutSeconds = dbTimeoutSeconds();
  const pool = createPool(
    connectionString,
    options.poolSize,
    options.watch ? { connectionTimeoutMillis: timeoutSeconds * 1000 } : {},
  );
  const db = createDatabase(pool);
  const watchdog = options.watch ? startWatchdog(connectionString, { timeoutSeconds }) : undefined;
  return {
    db,
    pool,
    connectionString,
    close: async () => {
      await watchdog?.stop();
      await db.destroy();
      await embedded?.stop();
    },
  };
}
