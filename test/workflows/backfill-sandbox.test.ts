import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../lib/config.ts';
import { backfillProgress, startBackfill } from '../../lib/temporal/backfill.ts';
import { easternDayStartUtc } from '../../lib/time/eastern.ts';
import { type Sandbox, startSandbox } from '../../provider/sandbox/server.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import { addDays } from '../../workflows/windows.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from './support.ts';
import { tableChecksums } from './support-warehouse.ts';

/**
 * The product path end to end: real Temporal, real worker, the real activities (provider client over
 * HTTP to the sandbox on 127.0.0.1, parser, loader, matching) and a real PostgreSQL per scenario.
 */
const FROM = '2026-01-01';
const TO = '2026-07-31';
let server: DevServer;
let sandbox: Sandbox;
const databases: DatabaseHandle[] = [];
let reference: Awaited<ReturnType<typeof tableChecksums>> | undefined;

beforeAll(async () => {
  [server, sandbox] = await Promise.all([
    startTestTemporal(),
    startSandbox({ seed: 'workflows', transactions: 1200, from: FROM, to: TO }),
  ]);
});
afterAll(async () => {
  await sandbox?.close();
  await server?.close();
  for (const h of databases) await h.close();
});

async function freshWarehouse(): Promise<DatabaseHandle> {
  const h = await createTestDatabase(12);
  databases.push(h);
  return h;
}

function activitiesFor(h: DatabaseHandle, env: Record<string, string> = {}) {
  return openProductionActivities(loadConfig({ ...sandbox.env(), ...env }), h);
}

async function ids(h: DatabaseHandle, table: string, column: string): Promise<string[]> {
  const r = await sql<{
    id: string;
  }>`select ${sql.ref(column)} as id from ${sql.table(table)} order by 1`.execute(h.db);
  return r.rows.map((x) => x.id);
}

describe('backfill against the sandbox', () => {
  it('loads exactly the sandbox data of 7 months in windows of at most 40 days, and a second run changes no row', async () => {
    const h = await freshWarehouse();
    const taskQueue = uniqueTaskQueue('sandbox');
    const opened = activitiesFor(h);
    const worker = await startTestWorker(server, taskQueue, opened.activities);
    try {
      const first = await startBackfill(server.client, { from: FROM, to: TO, taskQueue });
      const result = await first.handle.result();
      expect(result).toMatchObject({ from: FROM, to: TO, windows: 6, rowsRejected: 0, runs: 1 });

      const range = { start: easternDayStartUtc(FROM), end: easternDayStartUtc(addDays(TO, 1)) };
      // Report and legacy rows of a transaction meet in provider_transactions: every fact is there once.
      const expectedTransactions = [...sandbox.history.facts(range)].map((t) => t.transactionId).sort();
      expect(expectedTransactions.length).toBeGreaterThan(500);
      expect(await ids(h, 'provider_transactions', 'transaction_id')).toEqual(expectedTransactions);
      const expectedReturns = [
        ...new Set(
          [...sandbox.history.returns(range), ...sandbox.history.legacyReturns(range)].map(
            (r) => r.return_transaction_id,
          ),
        ),
      ].sort();
      expect(await ids(h, 'provider_returns', 'return_transaction_id')).toEqual(expectedReturns);
      expect(result.rowsLoaded).toBe(
        Number(
          (
            await h.db
              .selectFrom('loads')
              .select((eb) => eb.fn.sum<number>('rows_loaded').as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ),
      );
      // Every load covers one window of at most 40 Eastern days (41 x 24 h bounds it across DST).
      const spans = await sql<{ hours: number }>`
        select extract(epoch from window_end - window_start)::int / 3600 as hours from loads
        where status = 'committed'`.execute(h.db);
      // A load that failed (and was retried by Temporal) kept nothing: every row points to a committed one.
      const orphans = await sql<{ n: number }>`
        select count(*)::int as n from provider_transactions t join loads l using (load_id) where l.status <> 'committed'`.execute(
        h.db,
      );
      expect(orphans.rows[0]!.n).toBe(0);
      expect(spans.rows).toHaveLength(30);
      expect(Math.max(...spans.rows.map((r) => r.hours))).toBeLessThanOrEqual(40 * 24 + 1);

      reference = await tableChecksums(h, { lineage: false });
      const before = await tableChecksums(h, { lineage: true });
      const lastLoad = await h.db
        .selectFrom('loads')
        .select((eb) => eb.fn.max('load_id').as('id'))
        .executeTakeFirstOrThrow();
      const again = await startBackfill(server.client, { from: FROM, to: TO, taskQueue });
      expect(again.started).toBe(true);
      const second = await again.handle.result();
      expect(second.rowsLoaded).toBe(result.rowsLoaded);
      expect(await tableChecksums(h, { lineage: true })).toEqual(before);
      const secondLoads = await h.db
        .selectFrom('loads')
        .select((eb) => [
          eb.fn.countAll<number>().as('loads'),
          eb.fn.sum<number>('rows_inserted').as('inserted'),
          eb.fn.sum<number>('rows_updated').as('updated'),
        ])
        .where('load_id', '>', lastLoad.id)
        .where('status', '=', 'committed')
        .executeTakeFirstOrThrow();
      expect({
        ...secondLoads,
        inserted: Number(secondLoads.inserted),
        updated: Number(secondLoads.updated),
      }).toEqual({
        loads: 30,
        inserted: 0,
        updated: 0,
      });
    } finally {
      await worker.stop();
      await opened.close();
    }
  });

  it('ends with the same warehouse when the worker is killed mid-backfill and started again', async () => {
    const h = await freshWarehouse();
    const taskQueue = uniqueTaskQueue('killed');
    const opened = activitiesFor(h);
    let worker = await startTestWorker(server, taskQueue, opened.activities);
    try {
      const { handle } = await startBackfill(server.client, { from: FROM, to: TO, taskQueue });
      // Kill it once the first loads are in and windows are still running.
      for (let i = 0; i < 400; i++) {
        const loads = await h.db
          .selectFrom('loads')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        if (Number(loads.n) >= 3) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      const mid = await backfillProgress(handle);
      expect(mid.windowsDone).toBeLessThan(6);
      await worker.stop();
      worker = await startTestWorker(server, taskQueue, opened.activities);
      const result = await handle.result();
      expect(result.windows).toBe(6);
      expect(await tableChecksums(h, { lineage: false })).toEqual(reference);
    } finally {
      await worker.stop();
      await opened.close();
    }
  });

  it('stops windows on bad credentials after one attempt, with the error in the progress query', async () => {
    const h = await freshWarehouse();
    const taskQueue = uniqueTaskQueue('badcreds');
    const opened = activitiesFor(h, {
      RECON_CLIENT_SECRET: 'wrong-secret',
      RECON_LEGACY_MERCHANT_PASS: 'wrong-pass',
    });
    const worker = await startTestWorker(server, taskQueue, opened.activities);
    try {
      const started = Date.now();
      const { handle } = await startBackfill(server.client, {
        from: '2026-01-01',
        to: '2026-02-20',
        taskQueue,
      });
      await expect(handle.result()).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(20_000);
      const progress = await backfillProgress(handle);
      expect(progress).toMatchObject({
        windowsTotal: 2,
        windowsDone: 0,
        windowsFailed: 2,
        windowsLeft: 0,
        rowsLoaded: 0,
      });
      for (const failure of progress.failures) {
        expect(failure.message).toMatch(
          /^window \d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}: 5 of 5 sources failed; report-transactions: /,
        );
        expect(failure.message).not.toContain('wrong-secret');
        expect(failure.message).not.toContain('wrong-pass');
      }
      expect(await ids(h, 'provider_transactions', 'transaction_id')).toEqual([]);
    } finally {
      await worker.stop();
      await opened.close();
    }
  });
});
