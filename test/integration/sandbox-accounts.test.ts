import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccounts } from '../../config/accounts.ts';
import { loadConfig } from '../../config/config.ts';
import { ProviderAuthFailed, type ProviderClient } from '../../provider/client/index.ts';
import { createAccountClient } from '../../provider/client/account-client.ts';
import { type AccountsSandbox, startAccountsSandbox } from '../../sandbox/accounts-sandbox.ts';

/**
 * The sandbox with several accounts behind one address: each account its own credentials, merchant
 * ids and history; a token of one account gets 401 on another's resources, and one account's legacy
 * password does not open another's merchant id.
 */
const WINDOW = { start: '2026-10-26T04:00:00.000Z', end: '2026-10-28T04:00:00.000Z' };
let sandbox: AccountsSandbox;
const clients: ProviderClient[] = [];

beforeAll(async () => {
  sandbox = await startAccountsSandbox({
    accounts: [
      { name: 'ca-main', seed: 'sbx-ca', sandbox: { transactions: 200 } },
      { name: 'us-main', seed: 'sbx-us', sandbox: { transactions: 100 } },
    ],
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sandbox?.close();
});

function clientsOf(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'recon-sbx-accounts-'));
  const file = sandbox.accountsFile();
  writeFileSync(join(dir, 'accounts.json'), file.json);
  const accounts = loadAccounts({ RECON_ACCOUNTS_FILE: join(dir, 'accounts.json'), ...file.env, ...env });
  const of = (name: string) => {
    const client = createAccountClient(loadConfig({}), accounts, accounts.byName(name)!, {
      env: {},
      maxAttempts: 1,
    });
    clients.push(client);
    return client;
  };
  return { ca: of('ca-main'), us: of('us-main') };
}

async function json(stream: NodeJS.ReadableStream): Promise<{ transactionId: string }[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  return (Array.isArray(body) ? body : ((body as { transactions?: unknown[] }).transactions ?? [])) as {
    transactionId: string;
  }[];
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('sandbox with several accounts', () => {
  it('serves each account its own data through its own credentials', async () => {
    const { ca, us } = clientsOf();
    const ids = async (client: ProviderClient) =>
      (await json((await client.report({ queryType: 'TRANSACTION', ...WINDOW })).stream)).map(
        (t) => t.transactionId ?? (t as unknown as { transaction_id: string }).transaction_id,
      );
    const [caIds, usIds] = [await ids(ca), await ids(us)];
    expect(caIds.length).toBeGreaterThan(5);
    expect(usIds.length).toBeGreaterThan(2);
    expect(caIds.filter((id) => usIds.includes(id))).toEqual([]);
    const caFacts = [...sandbox.account('ca-main').history.facts(WINDOW)].filter(
      (f) => f.channel !== 'legacy',
    );
    expect(new Set(caIds)).toEqual(new Set(caFacts.map((f) => f.transactionId)));

    const legacy = await ca.legacyQuery({ queryType: '5', from: '2026-10-26', to: '2026-10-27' });
    legacy.stream.destroy();
  });

  it("gets 401 with one account's credentials on another's resources", async () => {
    const { ca } = clientsOf();
    const us = sandbox.account('us-main');
    const other = await failure(
      ca.report({ queryType: 'TRANSACTION', ...WINDOW, merchant: { merchantList: [us.merchantId] } }),
    );
    expect(other).toBeInstanceOf(ProviderAuthFailed);
    expect((other as ProviderAuthFailed).status).toBe(401);
    const usTransaction = [...us.history.facts(WINDOW)][0]!.transactionId;
    expect(await failure(ca.transactionStatus(usTransaction))).toBeInstanceOf(ProviderAuthFailed);
    // Its own merchant and transactions are fine.
    const own = sandbox.account('ca-main');
    (
      await ca.report({ queryType: 'TRANSACTION', ...WINDOW, merchant: { merchantList: [own.merchantId] } })
    ).stream.destroy();
    await ca.transactionStatus([...own.history.facts(WINDOW)][0]!.transactionId);

    // One account's legacy password on another's merchant id; one account's client id with another's secret.
    const crossed = clientsOf({ RECON_SANDBOX_CA_MAIN_LEGACY_PASS: us.legacyMerchantPass });
    expect(
      await failure(crossed.ca.legacyQuery({ queryType: '1', from: '2026-10-26', to: '2026-10-26' })),
    ).toMatchObject({
      status: 401,
    });
    const wrong = clientsOf({ RECON_SANDBOX_CA_MAIN_CLIENT_SECRET: us.clientSecret });
    expect(await failure(wrong.ca.report({ queryType: 'TRANSACTION', ...WINDOW }))).toBeInstanceOf(
      ProviderAuthFailed,
    );
  });
});
