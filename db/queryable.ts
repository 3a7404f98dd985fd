import type pg from 'pg';

/**
 * What runs a statement: a pool, a pooled client or a client of node-postgres, or Kysely seen as one
 * (db/database-on-client.ts queryOn), for statements written once for both.
 */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}
