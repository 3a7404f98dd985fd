import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { createProviderClient, type ProviderClient } from '../../provider/client/index.ts';
import { startSandbox, type Sandbox } from '../../sandbox/server.ts';
import { startNotificationReceiver, type NotificationReceiver } from '../../ingest/notifications/server.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * The sandbox's notifications (spec 2.4) reach the project's own receiver and are stored, and the
 * receiver's confirmations reach the sandbox's ConfirmTrans through the provider client.
 */

const SECRET = 'notification-secret-for-tests';
const WINDOW = { start: '2026-10-27T04:00:00.000Z', end: '2026-10-29T04:00:00.000Z' };

let handle: DatabaseHandle;
let sandbox: Sandbox;
let receiver: NotificationReceiver;
let client: ProviderClient;

beforeAll(async () => {
  handle = await createTestDatabase();
  sandbox = await startSandbox({ seed: 5, transactions: 400, from: '2026-10-20', to: '2026-11-05' });
  client = createProviderClient(loadConfig(sandbox.env()), { env: {}, baseDelayMs: 5 });
  receiver = await startNotificationReceiver({
    handle,
    config: { notificationSecret: SECRET },
    port: 0,
    confirm: async (body) => ({
      verificationCode: (await client.confirmTransaction(body as Record<string, unknown>)).verification_code,
    }),
  });
});
afterAll(async () => {
  await receiver?.close();
  await client?.close();
  await sandbox?.close();
  await handle?.close();
});

describe('sandbox notifications into the receiver', () => {
  it('delivers transaction and return notifications, stored once each, and confirmed', async () => {
    const live = await startSandbox({
      history: sandbox.history,
      notifyUrl: receiver.url,
      notifySecret: SECRET,
      notifyBackoffMs: 10,
    });
    try {
      const result = await live.notify(WINDOW);
      const facts = [...sandbox.history.facts(WINDOW)].filter(
        (f) => f.channel !== 'legacy' && f.notifyStatus !== 'I',
      );
      const returns = [...sandbox.history.facts()].filter(
        (f) =>
          f.channel !== 'legacy' &&
          f.return &&
          f.return.returnedAt >= WINDOW.start.replace('.000Z', '') &&
          f.return.returnedAt < WINDOW.end.replace('.000Z', ''),
      );
      expect(result).toEqual({
        sent: facts.length + returns.length,
        delivered: facts.length + returns.length,
      });
      expect(facts.length).toBeGreaterThan(10);

      const stored = await sql<{
        kind: string;
        transaction_id: string;
        status: string | null;
        amount_cents: number;
        fee_cents: number;
      }>`
        select kind, transaction_id, status, amount_cents, fee_cents from notifications order by transaction_id`.execute(
        handle.db,
      );
      const expected = [
        ...facts.map((f) => ({
          kind: 'transaction',
          transaction_id: f.transactionId,
          status: f.outcome,
          amount_cents: f.amountCents,
          fee_cents: f.feeCents,
        })),
        ...returns.map((f) => ({
          kind: 'return',
          transaction_id: f.return!.returnTransactionId,
          status: 'RETURNED',
          amount_cents: f.return!.amountCents,
          fee_cents: 0,
        })),
      ].sort((a, b) => a.transaction_id.localeCompare(b.transaction_id));
      expect(stored.rows).toEqual(expected);

      // A second delivery of the same bodies is counted, not stored twice.
      await live.notify(WINDOW);
      const count = await sql<{ n: number; deliveries: number }>`
        select count(*)::int as n, sum(delivery_count)::int as deliveries from notifications`.execute(
        handle.db,
      );
      expect(count.rows[0]).toEqual({ n: expected.length, deliveries: 2 * expected.length });

      // Confirmations go back through the client to the sandbox's ConfirmTrans.
      for (let i = 0; i < 100 && sandbox.confirmations.length < expected.length; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(sandbox.confirmations.length).toBeGreaterThanOrEqual(expected.length);
      // The receiver records the verification code after ConfirmTrans answers: poll for the update.
      await expect
        .poll(
          async () =>
            (
              await sql<{ n: number }>`
                select count(*)::int as n from notifications where verification_code like 'VC%'`.execute(
                handle.db,
              )
            ).rows[0]!.n,
          { timeout: 10_000 },
        )
        .toBe(expected.length);
    } finally {
      await live.close();
    }
  });
});
