import type { Insertable, Updateable } from 'kysely';
import type pg from 'pg';
import type { Environment } from '../../config/config.ts';
import type { LoadsTable } from '../../db/loads.table.ts';
import type { Queryable } from '../../db/queryable.ts';
import { EnvironmentMismatch } from '../../domain/errors.ts';
import type { RecordKind } from '../../domain/sources.ts';
import { TARGETS, type Target } from './targets.ts';

// The statements a load runs besides its COPYs, through node-postgres: a load of new rows (a first
// load of a report in key order) never loads Kysely, which only the merges of staged rows use
// (merge-kinds.ts, imported when a batch has rows to merge). docs/benchmark-record.md §3.

/** Runs `body` in a transaction on a connection of `pool`: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let value: T;
  try {
    await client.query('begin');
    value = await body(client);
    await client.query('commit');
  } catch (error) {
    // A connection that cannot roll back is not handed to the next user of the pool.
    await client.query('rollback').then(
      () => client.release(),
      (failed: Error) => client.release(failed),
    );
    throw error;
  }
  client.release();
  return value;
}

/**
 * Fixes the warehouse environment at the first load (the singleton warehouse_settings row) and refuses
 * a load from the other environment. Call inside the transaction that records the load, so a refused
 * load writes nothing.
 */
export async function claimEnvironment(q: Queryable, environment: Environment, what: string): Promise<void> {
  await q.query(
    'insert into warehouse_settings (environment) values ($1) on conflict (singleton) do nothing',
    [environment],
  );
  const { rows } = await q.query<{ environment: string }>('select environment from warehouse_settings');
  const stored = rows[0]?.environment;
  if (stored !== environment) {
    throw new EnvironmentMismatch(
      `refused to load ${what}: it comes from the ${environment} environment but this warehouse holds ${stored} data; ` +
        `point DATABASE_URL at a ${environment} warehouse or set RECON_ENVIRONMENT=${stored}`,
    );
  }
}

/** Inserts the `loads` row of a load starting; its id. */
export async function insertLoadRow(q: Queryable, row: Insertable<LoadsTable>): Promise<number> {
  const columns = Object.keys(row);
  const { rows } = await q.query<{ load_id: number }>(
    `insert into loads (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')}) returning load_id`,
    Object.values(row),
  );
  return rows[0]!.load_id;
}

/** Ends the loads row of `loadId` (committed or failed): its counts, the input as measured, the end time. */
export async function endLoadRow(
  q: Queryable,
  loadId: number,
  input: { readonly bytes: number; readonly zipped: boolean },
  end: Updateable<LoadsTable>,
): Promise<void> {
  const set = { ...end, file_bytes: input.bytes, zipped: input.zipped };
  const columns = Object.keys(set);
  await q.query(
    `update loads set ${columns.map((c, i) => `${c} = $${i + 1}`).join(', ')}, finished_at = now()
     where load_id = $${columns.length + 1}`,
    [...Object.values(set), loadId],
  );
}

/** attnum of every column of a table (the bits of unknown_mask, merge-staging.ts maskBits). */
export async function attnumsOf(q: Queryable, table: string): Promise<ReadonlyMap<string, number>> {
  const { rows } = await q.query<{ attname: string; attnum: number }>(
    `select attname, attnum::int as attnum
     from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped`,
    [table],
  );
  return new Map(rows.map((row) => [row.attname, row.attnum]));
}

/** Merge order: fixed, so that two loads touching the same tables take their locks in the same order. */
export const KIND_ORDER: readonly RecordKind[] = [
  'legacy-transaction',
  'transaction',
  'return',
  'adjustment',
  'ledger',
];

/**
 * Serialises loads writing the same table (SHARE ROW EXCLUSIVE conflicts with itself and with other
 * writers, not with readers): the merge can then insert new keys without ON CONFLICT. Held until the
 * load's transaction ends; loads merge their tables in a fixed order, so they cannot deadlock.
 */
export const lockStatement = (t: Pick<Target, 'table'>) =>
  `lock table ${t.table} in share row exclusive mode`;

/**
 * Begins the load's transaction on a connection of `pool`: the merge's settings, and every table the
 * load may write locked before the first batch, so that a later batch meeting a kind that the first
 * did not hold does not take a lock out of order (two loads could deadlock). One round trip.
 */
export async function beginLoadTransaction(
  pool: pg.Pool,
  kinds: ReadonlySet<RecordKind>,
): Promise<pg.PoolClient> {
  const tables = new Set<Target['table']>();
  for (const kind of KIND_ORDER) {
    if (!kinds.has(kind)) continue;
    tables.add(TARGETS[kind].table);
    if (kind === 'legacy-transaction') tables.add(TARGETS.transaction.table);
  }
  const client = await pool.connect();
  try {
    // The merge's hash joins (the seq of every new row of a first load) and the adjustments' window
    // sort: in memory rather than spilled to disk.
    await client.query(
      ['begin', `set local work_mem = '256MB'`, ...[...tables].map((table) => lockStatement({ table }))].join(
        '; ',
      ),
    );
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  return client;
}
