import type { ChildProcess } from 'node:child_process';
import { notificationBody as body } from '../support/notification-body.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createTestDatabase } from '../support/database.ts';
import { startReceiverProcess, type ReceiverProcess } from '../support/receiver-process.ts';

/**
 * The receiver as the provider meets it: `recon notifications serve` as an OS process. Concurrent
 * deliveries are all stored, each distinct body once; and a receiver killed between receiving a body
 * and committing it has answered no 200, so the provider retries, and the retry to a restarted
 * receiver is stored exactly once (whether or not the killed one's INSERT reached the server).
 */
const SECRET = 'crash-test-secret';
const workDir = mkdtempSync(join(tmpdir(), 'recon-receiver-'));
let h: DatabaseHandle;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await h.close();
  rmSync(workDir, { recursive: true, force: true });
});

async function startReceiver(): Promise<ReceiverProcess> {
  const receiver = await startReceiverProcess(h.connectionString, SECRET, { cwd: workDir });
  children.push(receiver.child);
  return receiver;
}

function deliver(url: string, payload: unknown): Promise<Response> {
  return fetch(`${url}/notifications/transaction`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
}

describe('recon notifications serve', () => {
  it('stores every concurrent delivery, each distinct body once', async () => {
    const receiver = await startReceiver();
    try {
      const ids = Array.from({ length: 60 }, (_, i) => `CONC-${i}`);
      // Every body twice, all at once: 120 requests in flight.
      const answers = await Promise.all([...ids, ...ids].map((id) => deliver(receiver.url, body(id))));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      const rows = await h.db
        .selectFrom('notifications')
        .select(['transaction_id', 'delivery_count'])
        .where('transaction_id', 'like', 'CONC-%')
        .execute();
      expect(rows).toHaveLength(60);
      expect(rows.every((r) => r.delivery_count === 2)).toBe(true);
    } finally {
      receiver.child.kill('SIGTERM');
    }
  });

  it('answers no 200 when killed before commit, and the provider retry is stored exactly once', async () => {
    const first = await startReceiver();
    // Hold the table so that the receiver's insert waits inside its transaction: the crash window.
    const blocker = new pg.Client({ connectionString: h.connectionString });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('lock table notifications in access exclusive mode');
      const attempt = deliver(first.url, body('CRASH-1')).then(
        (r) => ({ status: r.status }),
        (error: unknown) => ({ error: String(error) }),
      );
      // The receiver's insert is now waiting on the lock: its backend shows up as blocked.
      await expect
        .poll(
          async () =>
            (
              await h.pool.query<{ n: number }>(
                `select count(*)::int as n from pg_stat_activity
                 where datname = current_database() and wait_event_type = 'Lock' and pid <> $1`,
                [(blocker as unknown as { processID: number }).processID],
              )
            ).rows[0]?.n,
          { timeout: 10_000 },
        )
        .toBeGreaterThan(0);
      first.child.kill('SIGKILL');
      // The provider saw no 200: the connection died (it will retry).
      expect(await attempt).toHaveProperty('error');
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
    // The killed receiver may have handed its INSERT to PostgreSQL already: then the orphaned backend
    // finishes it once the lock is gone (at most one row), else nothing was stored. Either way the
    // provider saw no 200 and retries, and the retry must not store the body a second time.
    await expect
      .poll(
        async () =>
          (
            await h.pool.query<{ n: number }>(
              // Settled once no other session of this database is still working or inside a transaction.
              `select count(*)::int as n from pg_stat_activity
               where datname = current_database() and pid <> pg_backend_pid()
                 and state in ('active', 'idle in transaction', 'idle in transaction (aborted)')`,
            )
          ).rows[0]?.n,
        { timeout: 10_000 },
      )
      .toBe(0);
    const orphaned = (
      await h.db
        .selectFrom('notifications')
        .select('notification_id')
        .where('transaction_id', '=', 'CRASH-1')
        .execute()
    ).length;
    expect(orphaned).toBeLessThanOrEqual(1);

    const second = await startReceiver();
    try {
      const retry = await deliver(second.url, body('CRASH-1'));
      expect(retry.status).toBe(200);
      const again = await deliver(second.url, body('CRASH-1'));
      expect(again.status).toBe(200);
      const rows = await h.db
        .selectFrom('notifications')
        .select(['transaction_id', 'delivery_count'])
        .where('transaction_id', '=', 'CRASH-1')
        .execute();
      expect(rows).toEqual([{ transaction_id: 'CRASH-1', delivery_count: orphaned + 2 }]);
    } finally {
      second.child.kill('SIGTERM');
    }
  });
});
