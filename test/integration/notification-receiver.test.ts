import { mkdtempSync, writeFileSync } from 'node:fs';
import { notificationBody } from '../support/notification-body.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReadStream } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { type NotificationReceiver, startNotificationReceiver } from '../../ingest/notifications/server.ts';
import { createTestDatabase } from '../support/database.ts';

const SECRET = 'notify-secret-for-tests';
let h: DatabaseHandle;
let receiver: NotificationReceiver;
const confirmed: string[] = [];
const logs: string[] = [];

beforeAll(async () => {
  h = await createTestDatabase();
  receiver = await startNotificationReceiver({
    handle: h,
    config: { notificationSecret: SECRET },
    port: 0,
    maxBodyBytes: 4096,
    log: (line) => logs.push(line),
    confirm: async (_body, n) => {
      confirmed.push(n.transaction_id);
      return { verificationCode: 'V-1' };
    },
  });
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

const body = (transactionId: string, over: Record<string, unknown> = {}) =>
  notificationBody(transactionId, { transaction: over });

async function post(path: string, payload: unknown, auth = `Bearer ${SECRET}`) {
  const res = await fetch(`${receiver.url}${path}`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('notification receiver', () => {
  it('stores a valid body before answering 200 and counts a repeated delivery once', async () => {
    const first = await post('/notifications/transaction', body('T-1'));
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('stored');
    const basic = `Basic ${Buffer.from(`provider:${SECRET}`).toString('base64')}`;
    // Same body, keys in another order: same delivery.
    const { merchant, accountInfo, transaction } = body('T-1');
    const again = await post('/notifications/transaction', { transaction, accountInfo, merchant }, basic);
    expect(again).toEqual({
      status: 200,
      body: { status: 'duplicate', notificationId: first.body.notificationId },
    });
    const rows = await h.db.selectFrom('notifications').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      kind: 'transaction',
      transaction_id: 'T-1',
      merchant_transaction_id: 'M-T-1',
      status: 'SUCCESSFUL',
      raw_status: 'SUCCESS',
      amount_cents: 2015,
      raw_amount: '2015',
      fee_cents: 30,
      currency: 'CAD',
      account_label: '****1234',
      delivery_count: 2,
    });
    await expect.poll(() => confirmed).toEqual(['T-1', 'T-1']);
    await expect
      .poll(
        async () =>
          (await h.db.selectFrom('notifications').select('verification_code').executeTakeFirst())
            ?.verification_code,
      )
      .toBe('V-1');
  });

  it('refuses wrong credentials without storing, and never logs the secret', async () => {
    expect((await post('/notifications/transaction', body('T-2'), 'Bearer wrong')).status).toBe(401);
    expect((await post('/notifications/transaction', body('T-2'), '')).status).toBe(401);
    const n = await h.db
      .selectFrom('notifications')
      .select('notification_id')
      .where('transaction_id', '=', 'T-2')
      .execute();
    expect(n).toEqual([]);
    expect(logs.join('\n')).not.toContain(SECRET);
  });

  it('quarantines bad JSON and bodies outside the field limits, with the reason', async () => {
    const bad = await post('/notifications/return', '{"transaction": ');
    expect(bad.status).toBe(400);
    const long = await post('/notifications/transaction', {
      ...body('T-3'),
      merchant: { merchantTransactionId: 'x'.repeat(31) },
    });
    expect(long).toEqual({
      status: 400,
      body: {
        error: 'invalid notification',
        reason: 'merchant.merchantTransactionId is 31 characters; the maximum is 30',
      },
    });
    const label = await post('/notifications/transaction', body('T-4', {}));
    expect(label.status).toBe(200);
    const q = await h.db
      .selectFrom('notification_quarantine')
      .select(['kind', 'reason'])
      .orderBy('quarantine_id')
      .execute();
    expect(q.map((r) => r.kind)).toEqual(['return', 'transaction']);
    expect(q[0]!.reason).toMatch(/^body is not JSON/);
  });

  it('answers 413 to a body over the limit, 404 and 405 elsewhere, and 200 on /health', async () => {
    const big = await post('/notifications/transaction', { ...body('T-5'), pad: 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    expect((await fetch(`${receiver.url}/health`)).status).toBe(200);
    expect((await fetch(`${receiver.url}/nope`)).status).toBe(404);
    expect((await fetch(`${receiver.url}/notifications/return`)).status).toBe(405);
  });

  it('refuses callers outside the allow-list', async () => {
    const closed = await startNotificationReceiver({
      handle: h,
      config: { notificationSecret: SECRET },
      port: 0,
      allow: ['10.0.0.0/8'],
    });
    try {
      const res = await fetch(`${closed.url}/notifications/transaction`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}` },
        body: JSON.stringify(body('T-6')),
      });
      expect(res.status).toBe(403);
    } finally {
      await closed.close();
    }
  });

  it('imports a history export with its received_at, idempotently', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recon-notif-'));
    const file = join(dir, 'history.ndjson');
    writeFileSync(
      file,
      [
        { kind: 'transaction', received_at: '2026-01-05T10:00:00.123456Z', payload: body('H-1') },
        { kind: 'transaction', received_at: '2026-01-05T10:05:00Z', payload: body('H-1') },
        {
          kind: 'return',
          received_at: '2026-01-09T08:00:00Z',
          payload: body('H-R', { transactionType: 'RETURN' }),
        },
        { kind: 'transaction', received_at: 'yesterday', payload: body('H-2') },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\nnot json\n',
    );
    const first = await importNotificationHistory(h.db, createReadStream(file));
    expect(first).toEqual({ linesRead: 5, stored: 2, duplicates: 1, quarantined: 2 });
    const second = await importNotificationHistory(h.db, createReadStream(file));
    expect(second).toEqual({ linesRead: 5, stored: 0, duplicates: 3, quarantined: 2 });
    const h1 = await h.db
      .selectFrom('notifications')
      .select(['received_at', 'last_received_at', 'delivery_count'])
      .where('transaction_id', '=', 'H-1')
      .executeTakeFirstOrThrow();
    expect(h1).toEqual({
      received_at: '2026-01-05 10:00:00.123456+00',
      last_received_at: '2026-01-05 10:05:00+00',
      delivery_count: 2,
    });
  });
});
