import { Kysely, PostgresDialect, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { Database } from './database.ts';

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
