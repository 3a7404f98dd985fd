import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';

/** The harness itself: a restart keeps committed rows and the port; a stall hangs a query until resumed. */
let server: FaultPostgres;
beforeAll(async () => {
  server = await startFaultPostgres();
});
afterAll(async () => {
  await server?.close();
});

async function query(sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: server.url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end().catch(() => {});
  }
}

describe('fault PostgreSQL', () => {
  it('keeps committed rows over a crash, loses unlogged ones, and comes back on the same port', async () => {
    await query('create table kept (n int); insert into kept values (1)');
    await query('create unlogged table lost (n int); insert into lost values (1)');
    await query('checkpoint');
    const before = server.pid();
    await server.crash();
    expect(server.isRunning()).toBe(false);
    await expect(query('select 1')).rejects.toThrow();
    await server.start();
    expect(server.pid()).not.toBe(before);
    expect((await query('select count(*)::int as n from kept')).rows[0].n).toBe(1);
    expect((await query('select count(*)::int as n from lost')).rows[0].n).toBe(0);
  });

  it('stalls every query until resumed', async () => {
    server.stall();
    let done = false;
    const pending = query('select 42 as n').then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(done).toBe(false);
    server.resume();
    expect((await pending).rows[0].n).toBe(42);
  });
});
