import { CompiledQuery, Kysely, PostgresDialect, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { Database, Db } from './database.ts';
import type { Queryable } from './queryable.ts';

// Kysely over node-postgres, both ways: a Kysely on a pool or on a client the caller holds, and a
// Kysely seen as node-postgres' query() (for statements written once for both, db/pool.ts Queryable).

export function createDatabase(pool: pg.Pool): Kysely<Database> {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * A Kysely whose every query runs on `client`, a connection the caller holds: the caller opens a
 * transaction on it, runs raw statements on it between Kysely's (a COPY stream, which Kysely cannot
 * run), and ends it. Destroying the Kysely neither releases nor closes the client.
 */
export function databaseOnClient(client: pg.PoolClient): Kysely<Database> {
  const borrowed = {
    query: (...args: unknown[]) => (client as unknown as { query(...a: unknown[]): unknown }).query(...args),
    release: () => {},
  } as unknown as PostgresPoolClient;
  return new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: { connect: () => Promise.resolve(borrowed), end: () => Promise.resolve(), options: {} },
    }),
  });
}

/** `db` (a Kysely or its transaction) as a {@link Queryable}: the statement runs on its connection. */
export function queryOn(db: Db): Queryable {
  return {
    query: async <R>(text: string, values: unknown[] = []) => {
      const r = await db.executeQuery<R>(CompiledQuery.raw(text, values));
      return { rows: r.rows, rowCount: r.numAffectedRows === undefined ? null : Number(r.numAffectedRows) };
    },
  };
}
