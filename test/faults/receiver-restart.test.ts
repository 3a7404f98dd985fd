import { notificationBody } from '../support/notification-body.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';
import {
  deliverWithRetries,
  type ReceiverProcess,
  startReceiverProcess,
} from '../support/receiver-process.ts';

/**
 * `recon notifications serve` while its PostgreSQL restarts or crashes under 50 concurrent
 * deliveries: the process keeps running, answers 503 with Retry-After while the database is away,
 * accepts again by itself when it returns, and after the provider's retries every delivery is stored
 * exactly once. /health/live stays 200 throughout; /health/ready follows the database.
 */
const SECRET = 'receiver-fault-secret';
let server: FaultPostgres;
let receiver: ReceiverProcess;

beforeAll(async () => {
  server = await startFaultPostgres();
  receiver = await startReceiverProcess(server.url, SECRET);
});
afterAll(async () => {
  await receiver?.stop();
  await server?.close();
});

async function storedRows(prefix: string): Promise<{ transaction_id: string }[]> {
  const client = new pg.Client({ connectionString: server.url });
  client.on('error', () => {});
  await client.connect();
  try {
    return (
      await client.query<{ transaction_id: string }>(
        'select transaction_id from notifications where transaction_id like $1 order by 1',
        [`${prefix}%`],
      )
    ).rows;
  } finally {
    await client.end();
  }
}

/** 50 workers deliver `count` distinct bodies, each retried like the provider until a non-5xx. */
async function deliverAll(prefix: string, count: number) {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
  const outcomes: { id: string; final: number; statuses: number[] }[] = [];
  let next = 0;
  const deadline = Date.now() + 40_000;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const o = await deliverWithRetries(receiver.url, SECRET, JSON.stringify(notificationBody(id)), {
          deadline,
        });
        outcomes.push({ id, ...o });
      }
    }),
  );
  return { ids, outcomes };
}

async function status(path: string): Promise<number> {
  return fetch(`${receiver.url}${path}`).then(
    (r) => r.status,
    () => 0,
  );
}

describe('the receiver outlives its database', () => {
  for (const fault of ['restart', 'crash'] as const) {
    it(`keeps running through a ${fault} under 50 concurrent deliveries and stores each exactly once`, async () => {
      const prefix = `${fault.toUpperCase()}-`;
      const running = deliverAll(prefix, 1500);
      await sleep(300);
      if (fault === 'restart') await server.restart('fast');
      else {
        await server.crash();
        await sleep(500);
        await server.start();
      }
      const { ids, outcomes } = await running;
      expect(receiver.alive(), receiver.output()).toBe(true);
      expect(receiver.output()).not.toContain("Unhandled 'error' event");
      expect(outcomes.filter((o) => o.final !== 200)).toEqual([]);
      // Only 200 and 503 (database away) are answered: never 500, never a 4xx for a good body.
      const seen = new Set(outcomes.flatMap((o) => o.statuses));
      for (const s of seen) expect([0, 200, 503]).toContain(s);
      // The fault did land while deliveries were in flight.
      expect(seen.has(503) || seen.has(0)).toBe(true);
      expect((await storedRows(prefix)).map((r) => r.transaction_id)).toEqual(ids);
    });
  }

  it('answers 503 with Retry-After at once while the database is away, then accepts with no restart', async () => {
    await server.stop('fast');
    try {
      const started = Date.now();
      const res = await fetch(`${receiver.url}/notifications/transaction`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify(notificationBody('AWAY-1')),
      });
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(await status('/health/live')).toBe(200);
      expect(await status('/health')).toBe(200);
      expect(await status('/health/ready')).toBe(503);
    } finally {
      await server.start();
    }
    await expect.poll(() => status('/health/ready'), { timeout: 10_000 }).toBe(200);
    const again = await deliverWithRetries(receiver.url, SECRET, JSON.stringify(notificationBody('AWAY-1')));
    expect(again.final).toBe(200);
    expect(await storedRows('AWAY-')).toEqual([{ transaction_id: 'AWAY-1' }]);
    expect(receiver.alive()).toBe(true);
  });

  it('answers 503 within the store timeout while the database stalls, then at once, and recovers', async () => {
    const post = () =>
      fetch(`${receiver.url}/notifications/transaction`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify(notificationBody('STALL-1')),
      });
    server.stall();
    try {
      let started = Date.now();
      const first = await post();
      expect(first.status).toBe(503);
      expect(first.headers.get('retry-after')).toBeTruthy();
      expect(Date.now() - started).toBeLessThan(13_000);
      started = Date.now();
      expect((await post()).status).toBe(503);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await status('/health/live')).toBe(200);
      expect(await status('/health/ready')).toBe(503);
    } finally {
      server.resume();
    }
    await expect.poll(() => status('/health/ready'), { timeout: 15_000 }).toBe(200);
    const again = await deliverWithRetries(receiver.url, SECRET, JSON.stringify(notificationBody('STALL-1')));
    expect(again.final).toBe(200);
    // The stalled insert may have committed on resume: then the retry is a repeat, still one row.
    expect(await storedRows('STALL-')).toEqual([{ transaction_id: 'STALL-1' }]);
    expect(receiver.alive()).toBe(true);
  });
});
