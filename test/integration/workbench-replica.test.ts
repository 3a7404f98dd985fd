/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by exact assertions */
/**
 * The workbench over a primary and a REAL streaming replica (test/support/streaming-replica.ts): the
 * heavy reads go to the replica, actions, sign-in and the detail to the primary, a user's own writes
 * show in that user's reads at once, and a replica that is down is read around. Pausing the replica's
 * replay (pg_wal_replay_pause) makes it lag on purpose, so a read sent to the wrong server shows.
 */
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { databaseAddress } from '../../db/connection-errors.ts';
import type { Database } from '../../db/database.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser } from '../../workbench/auth/accounts.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { startWorkbench } from '../../workbench/start.ts';
import { startFaultPostgres, type FaultPostgres } from '../support/fault-postgres.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';
import { startStreamingReplica, type StreamingReplica } from '../support/streaming-replica.ts';

const PASSWORD = 'correct horse battery';
const NOW = '2026-03-20T12:00:00Z';
const RETRY_MS = 300;

let primary: FaultPostgres;
let replica: StreamingReplica;
let primaryDb: Kysely<Database>;
let replicaDb: Kysely<Database>;
let app: FastifyInstance;
let base: string;
const logs: string[] = [];

interface Client {
  cookie: string;
  csrf: string;
}
let alice: Client;
let bob: Client;

async function signIn(username: string): Promise<Client> {
  const res = await fetch(`${base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrf: body.csrfToken };
}

async function call(
  method: string,
  path: string,
  as: Client,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      cookie: as.cookie,
      'x-csrf-token': as.csrf,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** The worklist's items for one transaction id, as `as` sees them (every status). */
async function listed(as: Client, transactionId: string): Promise<{ id: number; status: string }[]> {
  const res = await call('GET', `/api/discrepancies?status=all&q=${transactionId}`, as);
  expect(res.status).toBe(200);
  return res.body.items.map((i: any) => ({ id: i.id, status: i.status }));
}

/** A new provider transaction with no ledger entry, reconciled on the primary: one new discrepancy. */
async function newDiscrepancyOnPrimary(transactionId: string): Promise<number> {
  const load = await insertLoad(primaryDb, 'report-transactions');
  await insertTransactions(primaryDb, load, [{ transaction_id: transactionId, notify_status: null }]);
  await reconcileRange(primaryDb, { from: '2026-03-02', to: '2026-03-02', now: NOW });
  return idOf(transactionId);
}

async function idOf(transactionId: string): Promise<number> {
  const row = await primaryDb
    .selectFrom('discrepancies')
    .select('discrepancy_id')
    .where('transaction_id', '=', transactionId)
    .executeTakeFirstOrThrow();
  return row.discrepancy_id;
}

/** Runs `body` with the replica's replay paused (WAL still arrives), then resumes it, even on failure. */
async function whileReplayPaused(body: () => Promise<void>): Promise<void> {
  await replica.pauseReplay();
  try {
    await body();
  } finally {
    await replica.resumeReplay();
  }
}

const replicaLines = () => logs.filter((l) => l.includes('read replica'));

beforeAll(async () => {
  primary = await startFaultPostgres();
  replica = await startStreamingReplica(primary);
  primaryDb = createDatabase(createPool(primary.url, 5));
  replicaDb = createDatabase(createPool(replica.url, 5, { connectionTimeoutMillis: 2000 }));
  const load = await insertLoad(primaryDb, 'report-transactions');
  await insertTransactions(primaryDb, load, [
    { transaction_id: 'T-OK', notify_status: null },
    { transaction_id: 'T-AMT1', amount_cents: 2000, notify_status: null },
    { transaction_id: 'T-AMT2', amount_cents: 5000, notify_status: null },
    { transaction_id: 'T-AMT3', amount_cents: 3000, notify_status: null },
  ]);
  await insertLedger(primaryDb, [
    { merchant_transaction_id: 'M-T-OK', transaction_id: 'T-OK' },
    { merchant_transaction_id: 'M-T-AMT1', transaction_id: 'T-AMT1' },
    { merchant_transaction_id: 'M-T-AMT2', transaction_id: 'T-AMT2' },
    { merchant_transaction_id: 'M-T-AMT3', transaction_id: 'T-AMT3' },
  ]);
  await reconcileRange(primaryDb, { from: '2026-03-02', to: '2026-03-02', now: NOW });
  await addUser(primaryDb, { username: 'alice', role: 'operator', password: PASSWORD });
  await addUser(primaryDb, { username: 'bob', role: 'operator', password: PASSWORD });
  await addUser(primaryDb, { username: 'victor', role: 'viewer', password: PASSWORD });
  app = await buildWorkbench({
    db: primaryDb,
    readReplica: { db: replicaDb, address: databaseAddress(replica.url), retryAfterMs: RETRY_MS },
    log: (line) => logs.push(line),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  await replica.caughtUp();
  alice = await signIn('alice');
  bob = await signIn('bob');
}, 180_000);

afterAll(async () => {
  await app?.close();
  await replicaDb?.destroy();
  await primaryDb?.destroy();
  await replica?.close();
  await primary?.close();
});

describe('workbench with a streaming read replica', () => {
  it('is a real hot standby: it is in recovery and refuses writes', async () => {
    const { rows } = await sql<{ standby: boolean }>`select pg_is_in_recovery() as standby`.execute(
      replicaDb,
    );
    expect(rows[0]!.standby).toBe(true);
    await expect(
      replicaDb
        .insertInto('workbench_users')
        .values({ username: 'x', role: 'viewer' } as any)
        .execute(),
    ).rejects.toMatchObject({ code: '25006' });
  });

  it('reads the worklist, its totals, CSV and runs from the replica, and the detail from the primary', async () => {
    const before = await call('GET', '/api/discrepancies', bob);
    const runsBefore = (await call('GET', '/api/runs', bob)).body.items.length;
    await whileReplayPaused(async () => {
      const id = await newDiscrepancyOnPrimary('T-NEW');
      expect(await listed(bob, 'T-NEW')).toEqual([]);
      const now = await call('GET', '/api/discrepancies', bob);
      expect(now.body.totals).toEqual(before.body.totals);
      expect(now.body.items.map((i: any) => i.id)).toEqual(before.body.items.map((i: any) => i.id));
      expect((await call('GET', '/api/discrepancies.csv', bob)).body).not.toContain('T-NEW');
      expect((await call('GET', '/api/runs', bob)).body.items).toHaveLength(runsBefore);
      expect((await call('GET', '/api/coverage?from=2026-03-01&to=2026-03-03', bob)).status).toBe(200);
      // The detail is read from the primary: the discrepancy the replica does not have yet is there.
      const detail = await call('GET', `/api/discrepancies/${id}`, bob);
      expect([detail.status, detail.body.discrepancy.transaction_id]).toEqual([200, 'T-NEW']);
      // Sign-in and sessions are on the primary: a session opened now is found at once.
      const victor = await signIn('victor');
      expect((await call('GET', '/api/session', victor)).body.username).toBe('victor');
    });
    await replica.caughtUp();
    expect(await listed(bob, 'T-NEW')).toEqual([{ id: await idOf('T-NEW'), status: 'open' }]);
    expect((await call('GET', '/api/runs', bob)).body.items).toHaveLength(runsBefore + 1);
    expect(replicaLines()).toEqual([]);
  });

  it("shows a user's own actions in that user's next reads while the replica lags, and only theirs", async () => {
    const id = await idOf('T-AMT1');
    await whileReplayPaused(async () => {
      // Actions are written on the primary: the standby would refuse them (25006, a 500).
      const ack = await call('POST', `/api/discrepancies/${id}/ack`, alice, { note: 'seen' });
      expect(ack.status).toBe(200);
      expect(await listed(alice, 'T-AMT1')).toEqual([{ id, status: 'acknowledged' }]);
      expect(await call('GET', `/api/discrepancies.csv?q=T-AMT1`, alice)).toMatchObject({
        body: expect.stringContaining(',acknowledged,'),
      });
      // Bob did not act: he reads the replica, which has not replayed alice's acknowledgement.
      expect(await listed(bob, 'T-AMT1')).toEqual([{ id, status: 'open' }]);

      const bulk = await call('POST', '/api/discrepancies/bulk', bob, {
        ids: [await idOf('T-AMT2')],
        action: 'ack',
        note: 'bulk',
      });
      expect([bulk.status, bulk.body.count]).toEqual([200, 1]);
      const comment = await call('POST', `/api/discrepancies/${id}/comment`, bob, { text: 'on it' });
      expect(comment.status).toBe(200);
      expect(await listed(bob, 'T-AMT2')).toEqual([{ id: await idOf('T-AMT2'), status: 'acknowledged' }]);
      const events = await primaryDb
        .selectFrom('discrepancy_events')
        .select(['actor', 'event'])
        .where('discrepancy_id', 'in', [id, await idOf('T-AMT2')])
        .where('actor', 'in', ['alice', 'bob'])
        .orderBy('event_id')
        .execute();
      expect(events.map((e) => `${e.actor} ${e.event}`)).toEqual([
        'alice acknowledged',
        'bob acknowledged',
        'bob commented',
      ]);
    });
    await replica.caughtUp();
    // Once the replica has replayed alice's write, alice reads the replica again: a write she did not
    // make, on the primary while replay is paused, is not in her list.
    expect(await listed(alice, 'T-AMT1')).toEqual([{ id, status: 'acknowledged' }]);
    await whileReplayPaused(async () => {
      await newDiscrepancyOnPrimary('T-LATER');
      expect(await listed(alice, 'T-LATER')).toEqual([]);
    });
    await replica.caughtUp();
    expect(replicaLines()).toEqual([]);
  });

  it('reads the primary while the replica is down, says so once, and goes back to it', async () => {
    await replica.stop();
    try {
      const all = await primaryDb
        .selectFrom('discrepancies')
        .select('discrepancy_id')
        .where('resolved_at', 'is', null)
        .execute();
      const list = await call('GET', '/api/discrepancies?limit=500', bob);
      expect(list.status).toBe(200);
      expect(list.body.items.map((i: any) => i.id).sort()).toEqual(all.map((r) => r.discrepancy_id).sort());
      const csv = await call('GET', '/api/discrepancies.csv', bob);
      expect([csv.status, csv.body.trim().split('\r\n').length]).toEqual([200, all.length + 1]);
      expect((await call('GET', '/api/runs', bob)).status).toBe(200);
      expect((await call('GET', '/api/loads', bob)).status).toBe(200);
      expect((await call('GET', '/api/coverage', bob)).status).toBe(200);
      await new Promise((r) => setTimeout(r, RETRY_MS + 100));
      expect((await call('GET', '/api/discrepancies', bob)).status).toBe(200);
      expect(replicaLines()).toHaveLength(1);
      expect(replicaLines()[0]).toMatch(
        new RegExp(
          `^workbench: the read replica 127\\.0\\.0\\.1:${replica.port}/recon failed \\(.+\\): reading from the primary`,
        ),
      );
      expect(replicaLines()[0]).not.toContain(':postgres@');
    } finally {
      await replica.start();
    }
    await replica.caughtUp();
    await new Promise((r) => setTimeout(r, RETRY_MS + 100));
    expect((await call('GET', '/api/discrepancies', bob)).status).toBe(200);
    expect(replicaLines()).toHaveLength(2);
    expect(replicaLines()[1]).toContain('answers again');
    // Back on the replica: a row it has not replayed is not listed.
    await whileReplayPaused(async () => {
      await newDiscrepancyOnPrimary('T-AFTER');
      expect(await listed(bob, 'T-AFTER')).toEqual([]);
    });
  });

  it('recon serve reads the replica named by RECON_WORKBENCH_READ_URL (config to pool)', async () => {
    const running = await startWorkbench(
      {
        databaseUrl: primary.url,
        workbenchReadUrl: replica.url,
        dataDir: '/nonexistent',
        temporalAddress: undefined,
        temporalNamespace: 'default',
      },
      { port: 0, host: '127.0.0.1' },
    );
    const saved = base;
    try {
      base = running.url.replace(/\/$/, '');
      const victor = await signIn('victor');
      await replica.caughtUp();
      await whileReplayPaused(async () => {
        const id = await newDiscrepancyOnPrimary('T-SERVE');
        expect(await listed(victor, 'T-SERVE')).toEqual([]);
        expect((await call('GET', `/api/discrepancies/${id}`, victor)).status).toBe(200);
      });
      await replica.caughtUp();
      expect(await listed(victor, 'T-SERVE')).toEqual([{ id: await idOf('T-SERVE'), status: 'open' }]);
    } finally {
      base = saved;
      await running.close();
    }
  });
});
