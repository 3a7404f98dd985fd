import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { notificationBody } from '../support/notification-body.ts';
import { createMetrics } from '../../observability/metrics.ts';
import { type MetricsServer, startMetricsServer } from '../../observability/serve-metrics.ts';
import { type NotificationReceiver, startNotificationReceiver } from '../../ingest/notifications/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { sample } from '../support/prometheus.ts';

/** The receiver's /metrics: deliveries by outcome and answers by status, as scraped by Prometheus. */
const SECRET = 'metrics-secret';
let h: DatabaseHandle;
let receiver: NotificationReceiver;
let server: MetricsServer;

beforeAll(async () => {
  h = await createTestDatabase();
  const metrics = createMetrics();
  receiver = await startNotificationReceiver({
    handle: h,
    config: { notificationSecret: SECRET },
    port: 0,
    metrics,
  });
  server = await startMetricsServer({ metrics, host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await h?.close();
});

function notification(transactionId: string, amount: unknown = 2015) {
  return JSON.stringify(notificationBody(transactionId, { transaction: { transactionAmount: amount } }));
}

async function post(body: string, secret = SECRET): Promise<number> {
  const res = await fetch(`${receiver.url}/notifications/transaction`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('notification receiver metrics', () => {
  it('counts stored, duplicate and quarantined deliveries and every answer by status', async () => {
    expect(await post(notification('MT-1'))).toBe(200);
    expect(await post(notification('MT-2'))).toBe(200);
    expect(await post(notification('MT-1'))).toBe(200); // the provider's retry
    expect(await post(notification('MT-3', '2015'))).toBe(400); // amount as a string
    expect(await post(notification('MT-4'), 'wrong')).toBe(401);

    const res = await fetch(server.url);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const delivered = (outcome: string) =>
      sample(text, 'recon_notifications_total', { kind: 'transaction', outcome });
    expect([delivered('stored'), delivered('duplicate'), delivered('quarantined')]).toEqual([2, 1, 1]);
    const answered = (status: string) => sample(text, 'recon_receiver_responses_total', { status });
    expect([answered('200'), answered('400'), answered('401')]).toEqual([3, 1, 1]);
    expect(text).toMatch(/^recon_process_resident_memory_bytes \d+/m);
    const stored = await h.db
      .selectFrom('notifications')
      .select(h.db.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(2);
  });
});
