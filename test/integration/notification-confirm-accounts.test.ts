import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Accounts, loadAccounts } from '../../config/accounts.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import {
  type AccountConfirmations,
  confirmPerAccount,
} from '../../ingest/notifications/confirm-per-account.ts';
import { type NotificationReceiver, startNotificationReceiver } from '../../ingest/notifications/server.ts';
import { type AccountsSandbox, startAccountsSandbox } from '../../sandbox/accounts-sandbox.ts';
import { createTestDatabase } from '../support/database.ts';
import { notificationBody } from '../support/notification-body.ts';

/**
 * ConfirmTrans with each account's own credentials (issue 25 §5): the receiver confirms a
 * notification filed under us-main with us-main's client, one filed under ca-main with ca-main's.
 * The sandbox with two accounts behind one address refuses a token on another account's
 * transaction, as the provider does, and keeps each account's confirmations apart.
 */
const SECRET = 'receiver-secret';
let sandbox: AccountsSandbox;
let accounts: Accounts;
let h: DatabaseHandle;
let confirmations: AccountConfirmations;
let receiver: NotificationReceiver;
const failures: string[] = [];

beforeAll(async () => {
  [sandbox, h] = await Promise.all([
    startAccountsSandbox({
      accounts: [
        { name: 'ca-main', seed: 'confirm-ca', sandbox: { transactions: 20 } },
        { name: 'us-main', seed: 'confirm-us', sandbox: { transactions: 20 } },
      ],
    }),
    createTestDatabase(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'recon-confirm-accounts-'));
  const file = sandbox.accountsFile();
  writeFileSync(join(dir, 'accounts.json'), file.json);
  accounts = loadAccounts({ RECON_ACCOUNTS_FILE: join(dir, 'accounts.json'), ...file.env });
  confirmations = confirmPerAccount(loadConfig({}), accounts, { env: {}, maxAttempts: 1 });
  receiver = await startNotificationReceiver({
    handle: h,
    config: { notificationSecret: SECRET },
    accounts,
    confirm: confirmations.confirm,
    port: 0,
    log: (line) => {
      if (line.includes('confirm')) failures.push(line);
    },
  });
});
afterAll(async () => {
  await receiver?.close();
  await confirmations?.close();
  await sandbox?.close();
  await h?.close();
});

/** A notification of the account's first transaction, posted on the account's own path. */
async function notify(name: string): Promise<string> {
  const fact = sandbox.account(name).history.fact(0);
  const res = await fetch(`${receiver.url}/notifications/${name}/transaction`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify(
      notificationBody(fact.transactionId, {
        merchant: {
          merchantId: sandbox.account(name).merchantId,
          merchantTransactionId: fact.merchantTransactionId,
        },
      }),
    ),
  });
  expect(res.status).toBe(200);
  return fact.transactionId;
}

const confirmedIds = (name: string) =>
  sandbox
    .account(name)
    .sandbox.confirmations.map(
      (b) => (b as { transaction: { transactionId: string } }).transaction.transactionId,
    );

describe('ConfirmTrans of several accounts', () => {
  it('confirms each notification with the credentials of the account it is filed under', async () => {
    const us = await notify('us-main');
    const ca = await notify('ca-main');
    await expect
      .poll(() => [confirmedIds('ca-main'), confirmedIds('us-main'), failures])
      .toEqual([[ca], [us], []]);
    await expect
      .poll(async () =>
        (
          await h.db
            .selectFrom('notifications')
            .select(['account', 'transaction_id'])
            .where('verification_code', 'is not', null)
            .orderBy('account')
            .execute()
        ).map((r) => [r.account, r.transaction_id]),
      )
      .toEqual([
        ['ca-main', ca],
        ['us-main', us],
      ]);
  });
});
