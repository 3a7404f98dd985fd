import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { AnyRecord, ParsedRow, TransactionRecord } from '../../domain/records.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { ROWS_PER_TURN } from '../../ingest/load/load-rows.ts';
import { CHUNKS_AHEAD, FIRST_CHUNK_ROWS } from '../../ingest/load/new-rows.ts';
import { TARGETS } from '../../ingest/load/targets.ts';
import { LEGACY_DEFAULT_FIELDS, legacyTransactionLine } from '../../sandbox/formats/legacy-csv.ts';
import { reportCsvChunks } from '../../sandbox/formats/report-csv.ts';
import { transactionToJson } from '../../sandbox/formats/report-json.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  bytesOf,
  reportRequest as report,
  legacyTransaction,
  rowHistoryOf,
  stagingTableCount,
  transaction,
  warehouseChecksum,
} from '../support/ingest-records.ts';

// New keys are copied straight into their table (no staging, no merge) in the load's transaction;
// a COPY that meets a stored key is rolled back to its savepoint and its rows are staged and merged.
// Either way the warehouse must end the same.

const handle = useTestDatabase();

const stagingTables = () => stagingTableCount(handle.db);

const storedCount = async (account: string) =>
  Number(
    (
      await handle.db
        .selectFrom('provider_transactions')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account', '=', account)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A parser yielding `records`, calling `pause` (awaited) before the record at index `at`. */
function pausingParser(records: TransactionRecord[], at: number, pause: () => Promise<void>) {
  return async function* (input: Readable): AsyncIterable<ParsedRow<AnyRecord>> {
    for await (const _chunk of input) {
      // drain
    }
    for (const [i, record] of records.entries()) {
      if (i === at) await pause();
      yield { ok: true, line: i + 2, raw: record.raw, record };
    }
  };
}

const ids = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) =>
    transaction({ transaction_id: `${prefix}${String(i).padStart(3, '0')}`, amount_cents: 100 + i }),
  );

/** Every stored column but the account and the lineage, by key: what two accounts' loads must share. */
async function rowsOf(account: string) {
  const r = await sql<{ row: Record<string, unknown> }>`select to_jsonb(t) - array['account', 'load_id',
      'first_load_id', 'created_at', 'updated_at'] as row
    from provider_transactions t where account = ${account} order by transaction_id`.execute(handle.db);
  return r.rows.map((x) => x.row);
}

const load = (over: Partial<LoadRequest>, input: Readable, parse?: Parameters<typeof loadReport>[3]) =>
  loadReport(handle, report(over), input, parse);

describe('new rows copied straight into their table', () => {
  it('write null where the format carries nothing, as the merge leaves it: no record column has a default', async () => {
    for (const kind of ['transaction', 'return'] as const) {
      const t = TARGETS[kind];
      const withDefault = await sql<{
        column_name: string;
      }>`select column_name from information_schema.columns
        where table_name = ${t.table} and column_default is not null
          and column_name = any(${[...t.columns]}::text[])`.execute(handle.db);
      expect(withDefault.rows).toEqual([]);
    }
  });

  it('stages nothing and shows nothing before the commit, and counts every row as inserted', async () => {
    let midway: { staging: number; visible: number } | undefined;
    const records = ids('S', 7);
    const summary = await load(
      { account: 'straight', batchRows: 2 },
      bytesOf('x'),
      pausingParser(records, 5, async () => {
        midway = { staging: await stagingTables(), visible: await storedCount('straight') };
      }),
    );
    // Two chunks were written by then, and a third was open: no staging table, nothing committed.
    expect(midway).toEqual({ staging: 0, visible: 0 });
    expect(summary).toMatchObject({ rowsLoaded: 7, rowsInserted: 7, rowsUpdated: 0, rowsUnchanged: 0 });
    const stored = await handle.db
      .selectFrom('provider_transactions')
      .select(['load_id', 'first_load_id', 'source', 'amount_cents'])
      .where('account', '=', 'straight')
      .orderBy('transaction_id')
      .execute();
    expect(stored).toEqual(
      records.map((r) => ({
        load_id: summary.loadId,
        first_load_id: summary.loadId,
        source: 'report-transactions',
        amount_cents: r.amount_cents,
      })),
    );
  });

  for (const format of ['report-json', 'report-csv'] as const) {
    it(`${format}: rows copied straight in are the rows the merge writes, unknown columns included`, async () => {
      const records = ids(`E${format.length}`, 7).map((r, i) => ({
        ...r,
        device_type: i % 2 === 0 ? 'MOBILE' : null,
        raw: `tab\there, newline\nthere, backslash \\ ${i}`,
      }));
      const file = async (rs: TransactionRecord[]) => {
        if (format === 'report-json')
          return bytesOf(`[${rs.map((r) => JSON.stringify(transactionToJson(r))).join(',\n')}]`);
        const parts: string[] = [];
        for await (const c of reportCsvChunks('TRANSACTION', rs)) parts.push(String(c));
        return bytesOf(parts.join(''));
      };
      const req = { format, queryType: 'TRANSACTION' } as const;
      const copied = await load({ ...req, account: `copy-${format}` }, await file(records));
      expect(copied).toMatchObject({ rowsInserted: 7 });
      // The first key stored already: the first COPY fails on it and the whole file is merged.
      await load({ ...req, account: `merge-${format}` }, await file(records.slice(0, 1)));
      const merged = await load({ ...req, account: `merge-${format}` }, await file(records));
      expect(merged).toMatchObject({ rowsInserted: 6, rowsUpdated: 0, rowsUnchanged: 1 });
      expect(await rowsOf(`merge-${format}`)).toEqual(await rowsOf(`copy-${format}`));
      expect(await stagingTables()).toBe(0);
    });
  }

  describe('legacy transactions, with their projection into provider_transactions', () => {
    /** Every column of an account's rows of `table` but the account and the lineage, by key. */
    const stored = async (table: 'legacy_transactions' | 'provider_transactions', account: string) =>
      (
        await sql<{ row: Record<string, unknown> }>`select to_jsonb(t) - array['account', 'load_id',
          'first_load_id', 'created_at', 'updated_at'] as row
        from ${sql.table(table)} t where account = ${account} order by transaction_id`.execute(handle.db)
      ).rows.map((x) => x.row);
    const records = Array.from({ length: 7 }, (_, i) =>
      legacyTransaction({
        transaction_id: `L${i}`,
        merchant_transaction_id: `LM${i}`,
        amount_cents: 300 + i,
      }),
    );
    const file = (fields: readonly number[], rs = records) =>
      bytesOf(rs.map((r) => legacyTransactionLine(r, fields)).join(''));

    for (const fields of [LEGACY_DEFAULT_FIELDS['5'], [1, 2, 4, 7]]) {
      it(`type 5 with fields ${fields.join(',')}: copied straight in as merged, projection included`, async () => {
        const req: Partial<LoadRequest> = {
          source: 'legacy-transactions',
          format: 'legacy',
          queryType: '5',
          fields: [...fields],
          batchRows: 3,
        };
        const tag = fields.length;
        expect(await load({ ...req, account: `lcopy-${tag}` }, file(fields))).toMatchObject({
          rowsInserted: 7,
        });
        await load({ ...req, account: `lmerge-${tag}` }, file(fields, records.slice(0, 1)));
        expect(await load({ ...req, account: `lmerge-${tag}` }, file(fields))).toMatchObject({
          rowsInserted: 6,
          rowsUnchanged: 1,
        });
        for (const table of ['legacy_transactions', 'provider_transactions'] as const) {
          expect(await stored(table, `lmerge-${tag}`)).toEqual(await stored(table, `lcopy-${tag}`));
        }
        // Without amount and status (fields 1,2,4,7) no provider row can be made.
        expect(await stored('provider_transactions', `lcopy-${tag}`)).toHaveLength(fields.length > 4 ? 7 : 0);
      });
    }

    it('a report row in the way of the projection sends the chunk to the merge: the report row stays', async () => {
      const account = 'lreport';
      await load(
        { account },
        bytesOf('x'),
        pausingParser([transaction({ transaction_id: 'L5', amount_cents: 1 })], 0, async () => {}),
      );
      const summary = await load(
        { account, source: 'legacy-transactions', format: 'legacy', queryType: '5', batchRows: 3 },
        file(LEGACY_DEFAULT_FIELDS['5']),
      );
      expect(summary).toMatchObject({ rowsInserted: 7 });
      const provider = await handle.db
        .selectFrom('provider_transactions')
        .select(['transaction_id', 'source', 'amount_cents'])
        .where('account', '=', account)
        .orderBy('transaction_id')
        .execute();
      expect(provider).toEqual([
        { transaction_id: 'L0', source: 'legacy-transactions', amount_cents: 300 },
        { transaction_id: 'L1', source: 'legacy-transactions', amount_cents: 301 },
        { transaction_id: 'L2', source: 'legacy-transactions', amount_cents: 302 },
        { transaction_id: 'L3', source: 'legacy-transactions', amount_cents: 303 },
        { transaction_id: 'L4', source: 'legacy-transactions', amount_cents: 304 },
        { transaction_id: 'L5', source: 'report-transactions', amount_cents: 1 },
        { transaction_id: 'L6', source: 'legacy-transactions', amount_cents: 306 },
      ]);
      expect(await stored('legacy_transactions', account)).toHaveLength(7);
    });
  });

  it('a key met twice in one chunk, or again in a later chunk, keeps its last occurrence without history', async () => {
    for (const batchRows of [undefined, 2]) {
      const account = `twice-${batchRows ?? 'default'}`;
      const summary = await load(
        { account, ...(batchRows ? { batchRows } : {}) },
        bytesOf('x'),
        pausingParser(
          [
            transaction({ transaction_id: 'D1', amount_cents: 1 }),
            transaction({ transaction_id: 'D2', amount_cents: 2 }),
            transaction({ transaction_id: 'D3', amount_cents: 3, raw: 'a\tb\nc\\d' }),
            transaction({ transaction_id: 'D1', amount_cents: 4 }),
            transaction({ transaction_id: 'D4', amount_cents: 5 }),
          ],
          0,
          async () => {},
        ),
      );
      expect(summary).toMatchObject({ rowsLoaded: 5, rowsInserted: 4, rowsUpdated: 0, rowsUnchanged: 1 });
      const stored = await handle.db
        .selectFrom('provider_transactions')
        .select(['transaction_id', 'amount_cents', 'raw'])
        .where('account', '=', account)
        .orderBy('transaction_id')
        .execute();
      expect(stored.map((r) => [r.transaction_id, r.amount_cents])).toEqual([
        ['D1', 4],
        ['D2', 2],
        ['D3', 3],
        ['D4', 5],
      ]);
      expect(stored[2]!.raw).toBe('a\tb\nc\\d');
      expect(await rowHistoryOf(handle.db, summary.loadId)).toEqual([]);
    }
  });

  it('an abort while a COPY is open fails the load whole, without waiting on itself', async () => {
    const before = await warehouseChecksum(handle.db);
    const abort = new AbortController();
    const error = await load(
      { account: 'aborted', batchRows: 10, signal: abort.signal },
      bytesOf('x'),
      pausingParser(ids('A', 8), 4, async () => abort.abort(new Error('stopped by the test'))),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe('stopped by the test');
    expect(await warehouseChecksum(handle.db)).toEqual(before);
    const row = await handle.db
      .selectFrom('loads')
      .select('status')
      .where('account', '=', 'aborted')
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('failed');
  });
});

describe('columns a JSON report carries from one of its elements on', () => {
  /** T1 and T2 have no device type, T3 has one, T4 has none: the column is carried from T3 on. */
  const elements = () =>
    ['T1', 'T2', 'T3', 'T4'].map((id) => {
      const json = transactionToJson(transaction({ transaction_id: id }));
      return id === 'T3' ? { ...json, deviceType: 'MOBILE' } : json;
    });
  const file = (items: unknown[]) => bytesOf(`[${items.map((x) => JSON.stringify(x)).join(',\n')}]`);
  const columns = async (account: string) =>
    handle.db
      .selectFrom('provider_transactions')
      .select([
        'transaction_id',
        'device_type',
        sql<string[] | null>`unknown_column_names('provider_transactions'::regclass, unknown_mask)`.as(
          'unknown',
        ),
      ])
      .where('account', '=', account)
      .orderBy('transaction_id')
      .execute();
  const expected = [
    { transaction_id: 'T1', device_type: null, unknown: ['device_type', 'request_type'] },
    { transaction_id: 'T2', device_type: null, unknown: ['device_type', 'request_type'] },
    { transaction_id: 'T3', device_type: 'MOBILE', unknown: ['request_type'] },
    { transaction_id: 'T4', device_type: null, unknown: ['request_type'] },
  ];

  it('copied straight in, in one chunk or in several', async () => {
    for (const batchRows of [undefined, 1]) {
      const account = `cols-copy-${batchRows ?? 'default'}`;
      await load({ account, ...(batchRows ? { batchRows } : {}) }, file(elements()));
      expect(await columns(account)).toEqual(expected);
    }
  });

  it('merged, in one batch or in several', async () => {
    for (const batchRows of [undefined, 1]) {
      const account = `cols-merge-${batchRows ?? 'default'}`;
      // T1 stored first: every row of the file is then staged and merged.
      await load({ account }, file(elements().slice(0, 1)));
      await load({ account, ...(batchRows ? { batchRows } : {}) }, file(elements()));
      expect(await columns(account)).toEqual(expected);
    }
  });
});

// Node parses while PostgreSQL writes the chunk before (docs/benchmark-record.md §3, the overlap):
// the server must get its first rows early, and the COPY's socket must be served while Node parses.
describe('new rows: Node and the server at work together', () => {
  /** A parser yielding `n` new transactions `prefix0000…`, calling `each` before each (a promise it returns awaited). */
  function manyParser(prefix: string, n: number, each: (i: number) => void | Promise<void> = () => {}) {
    return async function* (input: Readable): AsyncIterable<ParsedRow<AnyRecord>> {
      for await (const _chunk of input) {
        // drain
      }
      for (let i = 0; i < n; i++) {
        const wait = each(i);
        if (wait) await wait;
        const record = transaction({ transaction_id: `${prefix}${String(i).padStart(5, '0')}` });
        yield { ok: true, line: i + 2, raw: record.raw, record };
      }
    };
  }

  /** The rows of each COPY of new rows whose keys start with `prefix`, in the order written. */
  async function copies(prefix: string): Promise<number[]> {
    // One row of changed keys per COPY of new rows (noted-keys.ts), in the order they were written.
    const r = await sql<{ n: number }>`select cardinality(transaction_ids) as n from recon_work.changed_keys
      where transaction_ids[1] like ${`${prefix}%`} order by ctid`.execute(handle.db);
    return r.rows.map((x) => x.n);
  }

  it('the first COPY is small, the ones after it larger, up to a chunk', async () => {
    const summary = await load({ account: 'ramp' }, bytesOf('x'), manyParser('RAMP', 3_500));
    expect(summary).toMatchObject({ rowsInserted: 3_500 });
    const sizes = await copies('RAMP');
    expect(sizes[0]).toBe(FIRST_CHUNK_ROWS);
    expect(sizes.reduce((a, b) => a + b)).toBe(3_500);
  });

  it('a chunk goes as soon as the COPY before it has ended, once it holds a first chunk of rows', async () => {
    // The parser stops for a second after 1,200 rows of the second chunk, long after the first COPY
    // ended: the server is waiting, and the second chunk goes with what it holds, not at 2,000 rows.
    const pauseAt = FIRST_CHUNK_ROWS + 1_200;
    const summary = await load(
      { account: 'eager' },
      bytesOf('x'),
      manyParser('EAGR', 5_000, (i) =>
        i === pauseAt ? new Promise<void>((resolve) => setTimeout(resolve, 1_000)) : undefined,
      ),
    );
    expect(summary).toMatchObject({ rowsInserted: 5_000 });
    const sizes = await copies('EAGR');
    expect(sizes[0]).toBe(FIRST_CHUNK_ROWS);
    expect(sizes[1]).toBeGreaterThanOrEqual(FIRST_CHUNK_ROWS);
    expect(sizes[1]).toBeLessThanOrEqual(1_200 + 1);
    expect(sizes.reduce((a, b) => a + b)).toBe(5_000);
  });

  it('Node gathers rows ahead while a COPY is slow, a few chunks at most, and writes them in order', async () => {
    // The first row of the load takes two seconds to write: the parser goes on meanwhile.
    await sql`create function slow_row() returns trigger language plpgsql as $$
      begin if new.transaction_id = 'SLOW00000' then perform pg_sleep(2); end if; return new; end $$`.execute(
      handle.db,
    );
    await sql`create trigger slow_row before insert on provider_transactions
      for each row execute function slow_row()`.execute(handle.db);
    try {
      const summary = await load(
        { account: 'ahead', batchRows: 1_000 },
        bytesOf('x'),
        manyParser('SLOW', 9_000),
      );
      expect(summary).toMatchObject({ rowsInserted: 9_000 });
    } finally {
      await sql`drop trigger slow_row on provider_transactions`.execute(handle.db);
      await sql`drop function slow_row()`.execute(handle.db);
    }
    const sizes = await copies('SLOW');
    expect(sizes.slice(0, 2)).toEqual([1_000, CHUNKS_AHEAD * 1_000]);
    expect(sizes.reduce((a, b) => a + b)).toBe(9_000);
    expect(await storedCount('ahead')).toBe(9_000);
  });

  // A load fails whole after its first, smaller COPYs ended (FIRST_CHUNK_ROWS, then a chunk shipped as
  // soon as the one before ended): those COPYs' rows and the keys they noted go with the load's
  // transaction, and the same load again writes every row once.
  for (const where of ['the parser', 'the server'] as const) {
    it(`a load that fails after its first COPYs (in ${where}) leaves nothing, and its re-run loads every row`, async () => {
      const account = where === 'the parser' ? 'midway-parse' : 'midway-server';
      const prefix = where === 'the parser' ? 'MIDP' : 'MIDS';
      const before = await warehouseChecksum(handle.db);
      // A second's pause after 2,500 rows: the first COPY (1,000 rows) and the second have been written.
      const pause = (i: number) =>
        i === 2_500 ? new Promise<void>((resolve) => setTimeout(resolve, 1_000)) : undefined;
      if (where === 'the server') {
        await sql`create function refuse_row() returns trigger language plpgsql as $$
          begin if new.transaction_id = 'MIDS03200' then raise exception 'refused by the test'; end if;
          return new; end $$`.execute(handle.db);
        await sql`create trigger refuse_row before insert on provider_transactions
          for each row execute function refuse_row()`.execute(handle.db);
      }
      let error: unknown;
      try {
        error = await load(
          { account },
          bytesOf('x'),
          manyParser(prefix, 5_000, (i) => {
            if (where === 'the parser' && i === 3_200) throw new Error('refused by the test');
            return pause(i);
          }),
        ).catch((e: unknown) => e);
      } finally {
        if (where === 'the server') {
          await sql`drop trigger refuse_row on provider_transactions`.execute(handle.db);
          await sql`drop function refuse_row()`.execute(handle.db);
        }
      }
      expect(String((error as Error).message)).toContain('refused by the test');
      expect(await warehouseChecksum(handle.db)).toEqual(before);
      expect(await copies(prefix)).toEqual([]);
      expect(await stagingTables()).toBe(0);
      const failed = await handle.db
        .selectFrom('loads')
        .select('status')
        .where('account', '=', account)
        .execute();
      expect(failed.map((r) => r.status)).toEqual(['failed']);
      const summary = await load({ account }, bytesOf('x'), manyParser(prefix, 5_000));
      expect(summary).toMatchObject({ rowsInserted: 5_000 });
      expect(await storedCount(account)).toBe(5_000);
      const sizes = await copies(prefix);
      expect(sizes[0]).toBe(FIRST_CHUNK_ROWS);
      expect(sizes.reduce((a, b) => a + b)).toBe(5_000);
    });
  }

  it('the event loop turns every few hundred rows while they are parsed, not only between chunks', async () => {
    let fired = false;
    let seenAt: number | undefined;
    const from = FIRST_CHUNK_ROWS + 100;
    const summary = await load(
      { account: 'turns' },
      bytesOf('x'),
      manyParser('TURN', 3_000, (i) => {
        if (i === from) setImmediate(() => (fired = true));
        if (fired && seenAt === undefined) seenAt = i;
      }),
    );
    expect(summary).toMatchObject({ rowsInserted: 3_000 });
    // The second chunk ends at row 3,000: the turn came long before it.
    expect(seenAt).toBeLessThanOrEqual(from + ROWS_PER_TURN + 1);
  });
});
