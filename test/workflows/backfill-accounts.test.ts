import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccounts } from '../../config/accounts.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import { backfillProgress, startBackfill } from '../../workers/client/backfill.ts';
import { renderProgress } from '../../workers/client/progress-bar.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import { providerTaskQueue } from '../../workflows/task-queues.ts';
import type { WindowResult } from '../../workflows/types.ts';
import { addDays, splitWindows, windowWorkflowId } from '../../workflows/windows.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * A backfill of several provider accounts, end to end: real Temporal and worker, the real activities
 * over HTTP to one sandbox per account, a real PostgreSQL and an alert webhook on 127.0.0.1. One
 * account's client secret is wrong: the other accounts complete, the failing one is reported per
 * account (progress query, the backfill's failure) and alerted, and each account's pulls ran on its
 * own task queue.
 */
const FROM = '2026-03-01';
const TO = '2026-04-14';
const WRONG_SECRET = 'wrong-secret-of-us-main-5521';

let server: DevServer;
let ca: Sandbox;
let us: Sandbox;
let eu: Sandbox;
let h: DatabaseHandle;
let receiver: Server;
const alerts: { text: string; account?: string; type: string }[] = [];

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    void body(req).then((json) => {
      alerts.push(json as (typeof alerts)[number]);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  [server, ca, us, eu, h] = await Promise.all([
    startTestTemporal(),
    startSandbox({ seed: 'account-ca', transactions: 300, from: FROM, to: TO }),
    startSandbox({ seed: 'account-us', transactions: 300, from: FROM, to: TO }),
    startSandbox({ seed: 'account-eu', transactions: 300, from: FROM, to: TO }),
    createTestDatabase(12),
  ]);
});
afterAll(async () => {
  await Promise.all([ca?.close(), us?.close(), eu?.close()]);
  await server?.close();
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

function accountsFile(): { env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'recon-backfill-accounts-'));
  const file = join(dir, 'accounts.json');
  const entry = (name: string, s: Sandbox, secretVar: string, merchant: string) => ({
    name,
    baseUrl: s.baseUrl,
    authUrl: s.authUrl,
    queryUrl: s.queryUrl,
    clientId: s.clientId,
    clientSecret: { env: secretVar },
    // Each sandbox knows one merchant id; the ids differ per account as the file requires.
    legacyMerchantId: merchant,
    legacyMerchantPass: { env: `${secretVar}_LEGACY` },
  });
  writeFileSync(
    file,
    JSON.stringify({
      accounts: [
        entry('ca-main', ca, 'CA_SECRET', ca.legacyMerchantId),
        entry('us-main', us, 'US_SECRET', 'USM00001'),
        entry('eu-main', eu, 'EU_SECRET', 'EUM00001'),
      ],
    }),
  );
  return {
    env: {
      RECON_ACCOUNTS_FILE: file,
      CA_SECRET: ca.clientSecret,
      CA_SECRET_LEGACY: ca.legacyMerchantPass,
      US_SECRET: WRONG_SECRET,
      US_SECRET_LEGACY: us.legacyMerchantPass,
      EU_SECRET: eu.clientSecret,
      EU_SECRET_LEGACY: eu.legacyMerchantPass,
    },
  };
}

describe('backfill of several accounts', () => {
  it("one account's wrong credentials: the others complete, the failing one is reported and alerted", async () => {
    const { env } = accountsFile();
    const accounts = loadAccounts(env);
    const taskQueue = uniqueTaskQueue('accounts');
    const config = loadConfig({
      RECON_ALERT_WEBHOOKS: `json:http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    });
    const opened = openProductionActivities(config, h, { accounts });
    const names = accounts.list.map((a) => a.name);
    const worker = await startTestWorker(server, taskQueue, opened.activities, { accounts: names });
    try {
      // Report sources only: the legacy merchant ids of us and eu are not their sandboxes' own.
      const sources = ['report-transactions', 'report-returns'] as const;
      const { handle } = await startBackfill(server.client, {
        from: FROM,
        to: TO,
        taskQueue,
        accounts: names,
        sources,
        parallelism: 3,
      });
      const failure = await handle.result().then(
        () => null,
        (error: Error) => error,
      );
      const windows = splitWindows(FROM, TO);
      expect(windows).toHaveLength(2);
      expect((failure?.cause as Error | undefined)?.message).toMatch(
        /^backfill 2026-03-01\.\.2026-04-14: 2 of 6 windows failed \(account us-main; 2 of 3 accounts completed\); us-main 2026-03-01\.\.2026-04-09: account us-main: window 2026-03-01\.\.2026-04-09: 2 of 2 sources failed; report-transactions: the token endpoint refused the client credentials \(HTTP 401\): check account us-main clientId \/ account us-main clientSecret/,
      );

      const progress = await backfillProgress(handle);
      expect(progress).toMatchObject({ windowsTotal: 6, windowsDone: 4, windowsFailed: 2, windowsLeft: 0 });
      const byAccount = Object.fromEntries((progress.accounts ?? []).map((a) => [a.account, a]));
      expect(byAccount['ca-main']).toMatchObject({ windowsTotal: 2, windowsDone: 2, windowsFailed: 0 });
      expect(byAccount['eu-main']).toMatchObject({ windowsTotal: 2, windowsDone: 2, windowsFailed: 0 });
      expect(byAccount['us-main']).toMatchObject({
        windowsTotal: 2,
        windowsDone: 0,
        windowsFailed: 2,
        rowsLoaded: 0,
      });
      expect(byAccount['us-main']!.failures.map((f) => f.account)).toEqual(['us-main', 'us-main']);
      expect(renderProgress(progress, Date.now())).toContain(
        'ca-main 2/2, us-main 2/2 2 failed, eu-main 2/2',
      );

      // The completed accounts' data is in the warehouse: every report transaction of ca and eu.
      const range = { start: easternDayStartUtc(FROM), end: easternDayStartUtc(addDays(TO, 1)) };
      const expected = (s: Sandbox) =>
        [...s.history.facts(range)].filter((f) => f.channel !== 'legacy').map((f) => f.transactionId);
      const loaded = await sql<{
        id: string;
      }>`select transaction_id as id from provider_transactions`.execute(h.db);
      const ids = new Set(loaded.rows.map((r) => r.id));
      expect(expected(ca).length).toBeGreaterThan(50);
      for (const id of [...expected(ca), ...expected(eu)]) expect(ids.has(id)).toBe(true);
      for (const id of expected(us)) {
        if (!expected(ca).includes(id) && !expected(eu).includes(id)) expect(ids.has(id)).toBe(false);
      }

      // Each account's pulls ran on its own task queue; the window ids include the account.
      for (const name of names) {
        const history = await server.client.workflow
          .getHandle(windowWorkflowId({ ...windows[0]!, account: name }))
          .fetchHistory();
        const queues = new Set(
          (history.events ?? [])
            .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'pullSource')
            .map((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name),
        );
        expect([...queues]).toEqual([providerTaskQueue(taskQueue, name)]);
        expect(JSON.stringify(history)).not.toContain(WRONG_SECRET);
      }

      // The failing account alerted, once per failed window, naming the account.
      const failed = alerts.filter((a) => a.type === 'window_failed');
      expect(failed.map((a) => a.account)).toEqual(['us-main', 'us-main']);
      expect(failed[0]!.text).toMatch(
        /^Reconciliation window 2026-0\S+ of account us-main FAILED after its retries/,
      );
      expect(
        alerts
          .filter((a) => a.type === 'reconcile_run')
          .map((a) => a.account)
          .sort(),
      ).toEqual(['ca-main', 'ca-main', 'eu-main', 'eu-main']);
      expect(JSON.stringify(alerts)).not.toContain(WRONG_SECRET);
    } finally {
      await worker.stop();
      await opened.close();
    }
  });

  it("the nightly run covers every account of the workers, one child per account; one account's failure does not stop the others", async () => {
    const { env } = accountsFile();
    const accounts = loadAccounts(env);
    const taskQueue = uniqueTaskQueue('nightly-accounts');
    const opened = openProductionActivities(loadConfig({}), h, { accounts });
    const names = accounts.list.map((a) => a.name);
    const worker = await startTestWorker(server, taskQueue, opened.activities, { accounts: names });
    try {
      const failure = await server.client.workflow
        .execute<typeof nightlyWorkflow>('nightlyWorkflow', {
          taskQueue,
          workflowId: `nightly-${taskQueue}`,
          args: [{ day: '2026-04-12', lookbackDays: 2, sources: ['report-transactions'] }],
        })
        .then(
          () => null,
          (error: Error) => error,
        );
      expect((failure?.cause as Error | undefined)?.message).toMatch(
        /^nightly 2026-04-10\.\.2026-04-12: 1 account\(s\) failed, the others completed; us-main: account us-main: window 2026-04-10\.\.2026-04-12: 1 of 1 sources failed; report-transactions: the token endpoint refused/,
      );
      for (const name of ['ca-main', 'eu-main']) {
        const done: WindowResult = await server.client.workflow
          .getHandle(windowWorkflowId({ from: '2026-04-10', to: '2026-04-12', account: name }))
          .result();
        expect(done).toMatchObject({ account: name, from: '2026-04-10', to: '2026-04-12', rowsRejected: 0 });
        expect(done.rowsLoaded).toBeGreaterThan(0);
      }
    } finally {
      await worker.stop();
      await opened.close();
    }
  });
});
