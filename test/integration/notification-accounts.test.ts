import { sql } from 'kysely';
import { notificationBody } from '../support/notification-body.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsOf } from '../../config/accounts.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { type NotificationReceiver, startNotificationReceiver } from '../../ingest/notifications/server.ts';
import { createTestDatabase } from '../support/database.ts';

// The receiver files each notification under its account: by the payload's merchantId, by the path
// /notifications/<account>/<kind>, or by the account's own secret; one for no configured account is
// kept in quarantine with the reason, never filed under a guess.

const SECRET = 'receiver-wide-secret';
const US_SECRET = 'us-main-own-secret';
let h: DatabaseHandle;
let receiver: NotificationReceiver;

beforeAll(async () => {
  h = await createTestDatabase();
  receiver = await startNotificationReceiver({
    handle: h,
    config: { notificationSecret: SECRET },
    accounts: accountsOf([
      { name: 'ca-main', environment: 'staging', legacyMerchantId: 'MRC-CA' },
      { name: 'us-main', environment: 'staging', legacyMerchantId: 'MRC-US', notificationSecret: US_SECRET },
      { name: 'eu-main', environment: 'staging' },
    ]),
    port: 0,
  });
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const body = (transactionId: string, merchantId?: string) =>
  notificationBody(transactionId, { merchant: { merchantId } });

async function post(path: string, payload: unknown, secret = SECRET) {
  const res = await fetch(`${receiver.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function accountOf(transactionId: string) {
  const r = await sql<{ account: string }>`select account from notifications
    where transaction_id = ${transactionId} order by account`.execute(h.db);
  return r.rows.map((x) => x.account);
}

async function quarantined() {
  const r = await sql<{ account: string | null; reason: string }>`
    select account, reason from notification_quarantine order by quarantine_id`.execute(h.db);
  return r.rows;
}

describe('notifications of several accounts', () => {
  it('files by merchantId, by path and by an account secret', async () => {
    expect((await post('/notifications/transaction', body('T-CA', 'MRC-CA'))).status).toBe(200);
    expect(await accountOf('T-CA')).toEqual(['ca-main']);
    expect((await post('/notifications/eu-main/transaction', body('T-EU'))).status).toBe(200);
    expect(await accountOf('T-EU')).toEqual(['eu-main']);
    expect((await post('/notifications/transaction', body('T-US'), US_SECRET)).status).toBe(200);
    expect(await accountOf('T-US')).toEqual(['us-main']);
  });

  it('the same body for two accounts is two notifications, each counted on its own', async () => {
    const a = await post('/notifications/ca-main/transaction', body('T-SAME'));
    const b = await post('/notifications/eu-main/transaction', body('T-SAME'));
    const again = await post('/notifications/eu-main/transaction', body('T-SAME'));
    expect([a.body.status, b.body.status, again.body.status]).toEqual(['stored', 'stored', 'duplicate']);
    expect(await accountOf('T-SAME')).toEqual(['ca-main', 'eu-main']);
  });

  it('quarantines what names no account, an unknown one, or two that disagree', async () => {
    const before = (await quarantined()).length;
    const cases = [
      await post('/notifications/transaction', body('Q-1')),
      await post('/notifications/transaction', body('Q-2', 'MRC-NOBODY')),
      await post('/notifications/nowhere/transaction', body('Q-3', 'MRC-CA')),
      await post('/notifications/eu-main/transaction', body('Q-4', 'MRC-CA')),
    ];
    expect(cases.map((c) => c.status)).toEqual([400, 400, 400, 400]);
    const rows = (await quarantined()).slice(before);
    expect(rows).toEqual([
      { account: null, reason: expect.stringMatching(/no merchantId, and neither the path nor the secret/) },
      { account: null, reason: expect.stringMatching(/merchantId '.*' is the legacy merchant id of no/) },
      { account: null, reason: "no account named 'nowhere' in the accounts configuration" },
      { account: 'eu-main', reason: expect.stringMatching(/is account ca-main's, but the delivery names/) },
    ]);
    const stored = await sql<{ n: number }>`select count(*)::int as n from notifications
      where transaction_id like 'Q-%'`.execute(h.db);
    expect(stored.rows[0]!.n).toBe(0);
  });

  it('an account secret is good for its own account only', async () => {
    expect((await post('/notifications/ca-main/transaction', body('T-X'), US_SECRET)).status).toBe(401);
    expect((await post('/notifications/us-main/transaction', body('T-Y', 'MRC-US'), US_SECRET)).status).toBe(
      200,
    );
    expect((await post('/notifications/transaction', body('T-Z'), 'wrong')).status).toBe(401);
  });
});
