import { describe, expect, it } from 'vitest';
import { copyPipelined } from '../../ingest/load/copy-pipelined.ts';
import { useTestDatabase } from '../support/database.ts';

// The loader sends a query ending in a COPY with the COPY's text right after it, before the server
// has answered anything: a statement that fails must surface as the driver's error, nothing of the
// query may stay, and the connection must answer the next query in step.

const handle = useTestDatabase(2);

const rows = (...lines: string[]) => [Buffer.from(lines.map((l) => `${l}\n`).join(''))];

async function withTables<T>(run: (client: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const client = await handle.pool.connect();
  try {
    await client.query(`create temp table pipelined_a (id int primary key, note text);
      create temp table pipelined_b (id int primary key)`);
    return await run(client);
  } finally {
    client.release(true);
  }
}

describe('a query sent with its COPY text in one write', () => {
  it('runs the statements before the COPY, then the COPY with its data', async () => {
    await withTables(async (client) => {
      await copyPipelined(client, `insert into pipelined_b values (99); copy pipelined_a from stdin`, [
        ...rows('1\tone'),
        Buffer.alloc(0),
        ...rows('2\t\\N', '3\tthree'),
      ]);
      const a = await client.query('select id, note from pipelined_a order by id');
      expect(a.rows).toEqual([
        { id: 1, note: 'one' },
        { id: 2, note: null },
        { id: 3, note: 'three' },
      ]);
      expect((await client.query('select id from pipelined_b')).rows).toEqual([{ id: 99 }]);
    });
  });

  it("rejects with the COPY's error, keeps nothing of the query and goes on", async () => {
    await withTables(async (client) => {
      await client.query(`insert into pipelined_a values (2, 'stored')`);
      await client.query('begin');
      await client.query('savepoint s');
      const failed = copyPipelined(
        client,
        `insert into pipelined_b values (99); copy pipelined_a from stdin`,
        [...rows('1\tnew', '2\tagain'), ...rows('3\tmore')],
      );
      await expect(failed).rejects.toMatchObject({ code: '23505' });
      // The connection answers the next query, in the transaction the failure aborted.
      await client.query('rollback to savepoint s');
      await client.query('commit');
      expect((await client.query('select id from pipelined_a order by id')).rows).toEqual([{ id: 2 }]);
      expect((await client.query('select count(*)::int n from pipelined_b')).rows).toEqual([{ n: 0 }]);
    });
  });

  it('drops the COPY text when a statement before the COPY fails (an aborted transaction)', async () => {
    await withTables(async (client) => {
      await client.query('begin');
      await expect(client.query('select 1/0')).rejects.toMatchObject({ code: '22012' });
      const failed = copyPipelined(
        client,
        `savepoint s2; copy pipelined_a from stdin`,
        rows('1\tsent', '2\tsent'),
      );
      await expect(failed).rejects.toMatchObject({ code: '25P02' });
      await client.query('rollback');
      expect((await client.query('select count(*)::int n from pipelined_a')).rows).toEqual([{ n: 0 }]);
      // And the connection is in step: the next query gets its own answer.
      expect((await client.query('select 41 + 1 as v')).rows).toEqual([{ v: 42 }]);
    });
  });

  it('rejects a bad value with the server error, and the connection goes on', async () => {
    await withTables(async (client) => {
      const failed = copyPipelined(client, `copy pipelined_a from stdin`, rows('1\tok', 'x\tbad'));
      await expect(failed).rejects.toMatchObject({ code: '22P02' });
      expect((await client.query('select count(*)::int n from pipelined_a')).rows).toEqual([{ n: 0 }]);
      expect((await client.query('select 41 + 1 as v')).rows).toEqual([{ v: 42 }]);
    });
  });
});
