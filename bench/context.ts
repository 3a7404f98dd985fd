import pg from 'pg';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import { migrateToLatest } from '../db/migrate.ts';
import type { BenchContext } from './steps.ts';

/**
 * A {@link BenchContext} on the server of `adminUrl`: a migrated template database, copied for each
 * `newDatabase()`. `dropDatabases()` drops the copies made so far (a large run frees its disk between
 * sizes); `close()` drops them and the template.
 */
export interface ServerBenchContext extends BenchContext {
  dropDatabases(): Promise<void>;
  close(): Promise<void>;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The rows of one statement, run on its own connection: database DDL, which a pool's transaction
 * cannot hold, and the benches' readings between steps (a count, the WAL's position), which must not
 * keep a backend of the server they measure alive. Without values, several statements may be sent
 * as one text (the simple protocol).
 */
export async function queryRows<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: readonly unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, [...values])).rows;
  } finally {
    await client.end();
  }
}

/** Runs one statement on its own connection (queryRows). */
export async function runStatement(url: string, text: string): Promise<void> {
  await queryRows(url, text);
}

export async function openBenchContext(
  adminUrl: string,
  options: { workDir: string; rows: number; log: (message: string) => void; tag?: string },
): Promise<ServerBenchContext> {
  const admin = (text: string) => runStatement(adminUrl, text);
  const prefix = `recon_bench_${options.tag ?? ''}${process.pid}`;
  const template = `recon_bench_template_${options.tag ?? ''}${process.pid}`;
  await admin(`create database ${template}`);
  {
    const pool = createPool(withDatabase(adminUrl, template), 2);
    const db = createDatabase(pool);
    await migrateToLatest(db);
    await db.destroy();
  }
  let made = 0;
  const copies: string[] = [];
  const dropDatabases = async () => {
    for (const name of copies.splice(0).reverse())
      await admin(`drop database if exists ${name} with (force)`).catch(() => {});
  };
  return {
    workDir: options.workDir,
    rows: options.rows,
    log: options.log,
    async newDatabase() {
      const name = `${prefix}_${++made}`;
      await admin(`create database ${name} template ${template}`);
      copies.push(name);
      return withDatabase(adminUrl, name);
    },
    dropDatabases,
    async close() {
      await dropDatabases();
      await admin(`drop database if exists ${template} with (force)`).catch(() => {});
    },
  };
}
