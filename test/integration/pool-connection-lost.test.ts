import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { isDatabaseUnavailable } from '../../db/connection-errors.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * The root of "the receiver exits with Unhandled 'error' event" when PostgreSQL restarts: a pooled
 * connection checked out but between two queries when the server ends it. pg.Client then emits
 * 'error' with no query to give it to; without a listener the process dies. createPool gives every
 * client a listener: the next query on that client fails (as "database unavailable"), the pool
 * discards the client on release, and the next checkout works.
 */
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(2);
});
afterAll(async () => h.close());

describe('a pooled connection the server ends', () => {
  it('does not kill the process while checked out, and the pool carries on', async () => {
    const client = await h.pool.connect();
    const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const other = await h.pool.connect();
    await other.query('select pg_terminate_backend($1)', [pid]);
    other.release();
    // The FATAL message arrives on the idle checked-out client: this used to be an uncaught error.
    await sleep(300);
    const failed = await client.query('select 1').then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).not.toBeNull();
    expect(isDatabaseUnavailable(failed)).toBe(true);
    client.release(failed as Error);
    const again = await h.pool.query<{ one: number }>('select 1 as one');
    expect(again.rows).toEqual([{ one: 1 }]);
  });
});
