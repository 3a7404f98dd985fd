import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../db/connect.ts';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadConfig, loadDotEnv } from '../config/config.ts';

/**
 * The server the reconciliation benchmarks run on (DATABASE_URL's, else the embedded warehouse of the
 * data directory) and their scratch databases on it. A scratch database is never the warehouse itself.
 */
export interface BenchServer {
  /** The server's own connection string (its default database): for bench/context.ts. */
  readonly adminUrl: string;
  /** A database created here, migrated unless it is a copy of `template`. */
  create(name: string, options?: { template?: string; poolSize?: number }): Promise<DatabaseHandle>;
  /** Opens an existing database of this server (one prepared by an earlier run). */
  open(name: string, poolSize?: number): DatabaseHandle;
  exists(name: string): Promise<boolean>;
  drop(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function openBenchServer(): Promise<BenchServer> {
  loadDotEnv();
  const admin = await openDatabase(loadConfig(), { poolSize: 1, schema: 'as-is' });
  const client = new pg.Client({ connectionString: admin.connectionString });
  await client.connect();
  const urlOf = (name: string) => {
    const url = new URL(admin.connectionString);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const open = (name: string, poolSize = 2): DatabaseHandle => {
    const connectionString = urlOf(name);
    const pool = createPool(connectionString, poolSize);
    const db = createDatabase(pool);
    return { db, pool, connectionString, close: () => db.destroy() };
  };
  return {
    adminUrl: admin.connectionString,
    async create(name, options = {}) {
      await client.query(`drop database if exists ${name} with (force)`);
      // FILE_COPY: a copy of a multi-gigabyte template without writing all of it to the WAL again.
      await client.query(
        options.template === undefined
          ? `create database ${name}`
          : `create database ${name} template ${options.template} strategy file_copy`,
      );
      const handle = open(name, options.poolSize);
      if (options.template === undefined) await migrateToLatest(handle.db);
      return handle;
    },
    open,
    async exists(name) {
      const r = await client.query('select 1 from pg_database where datname = $1', [name]);
      return r.rowCount === 1;
    },
    async drop(name) {
      await client.query(`drop database if exists ${name} with (force)`);
    },
    async close() {
      await client.end();
      await admin.close();
    },
  };
}

/**
 * The end of a bench's scratch databases: dropped, unless RECON_BENCH_KEEP=1 keeps them for EXPLAIN
 * sessions; then the server is closed.
 */
export async function dropScratch(
  server: BenchServer,
  names: readonly string[],
  log: (line: string) => void,
): Promise<void> {
  if (process.env.RECON_BENCH_KEEP !== '1') for (const name of names) await server.drop(name);
  else log(`  kept ${names.length === 1 ? 'database' : 'databases'} ${names.join(', ')}`);
  await server.close();
}
