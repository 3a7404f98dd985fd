import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccounts } from '../../config/accounts.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import {
  type AccountsSandbox,
  secretVariable,
  startAccountsSandbox,
} from '../../sandbox/accounts-sandbox.ts';
import { backfillProgress, startBackfill } from '../../workers/client/backfill.ts';
import { renderProgress } from '../../workers/client/progress-bar.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import { providerTaskQueue } from '../../workflows/task-queues.ts';
import type { WindowResult } from '../../workflows/types.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { splitWindows, windowWorkflowId } from '../../workflows/windows.ts';
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
let sandbox: AccountsSandbox;
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
  const history = { transactions: 300, from: FROM, to: TO };
  [server, sandbox, h] = await Promise.all([
    startTestTemporal(),
    startAccountsSandbox({
      accounts: [
        { name: 'ca-main', seed: 'account-ca', sandbox: history },
        { name: 'us-main', seed: 'account-us', sandbox: history },
        { name: 'eu-main', seed: 'account-eu', sandbox: history },
      ],
    }),
    createTestDatabase(12),
  ]);
});
afterAll(async () => {
  await sandbox?.close();
  await server?.close();
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The sandbox's accounts file, with us-main's client secret wrong. */
function accountsFile(): { env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'recon-backfill-accounts-'));
  const file = sandbox.accountsFile();
  writeFileSync(join(dir, 'accounts.json'), file.json);
  return {
    env: {
      ...file.env,
      RECON_ACCOUNTS_FILE: join(dir, 'accounts.json'),
      [secretVariable('us-main', 'CLIENT_SECRET')]: WRONG_SECRET,
    },
  };
}

/** Every string inside a history, with the bytes of payloads and failures decoded as UTF-8. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
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
      const { handle } = await startBackfill(server.client, {
        from: FROM,
        to: TO,
        taskQueue,
        accounts: names,
        parallelism: 3,
      });
      const failure = await handle.result().then(
        () => null,
        (error: Error) => error,
      );
      const windows = splitWindows(FROM, TO);
      expect(windows).toHaveLength(2);
      expect((failure?.cause as Error | undefined)?.message).toMatch(
        /^backfill 2026-03-01\.\.2026-04-14: 2 of 6 windows failed \(account us-main; 2 of 3 accounts completed\); us-main 2026-03-01\.\.2026-04-09: account us-main: window 2026-03-01\.\.2026-04-09: 2 of 5 sources failed; report-transactions: the token endpoint refused the client credentials \(HTTP 401\): check account us-main clientId \/ account us-main clientSecret/,
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
      const expected = (name: string) =>
        [...sandbox.account(name).history.facts(range)].map((f) => f.transactionId);
      const loaded = await sql<{
        id: string;
      }>`select transaction_id as id from provider_transactions`.execute(h.db);
      const ids = new Set(loaded.rows.map((r) => r.id));
      expect(expected('ca-main').length).toBeGreaterThan(50);
      // us-main's legacy pulls worked (its legacy credentials are right), its report pulls did not.
      const usLegacy = [...sandbox.account('us-main').history.facts(range)]
        .filter((f) => f.channel !== 'report')
        .map((f) => f.transactionId);
      expect(usLegacy.length).toBeGreaterThan(10);
      expect([...ids].sort()).toEqual([...expected('ca-main'), ...expected('eu-main'), ...usLegacy].sort());

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
      await expectNoSecretAnywhere();
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

describe('recon worker with RECON_ACCOUNTS_FILE', () => {
  it("polls every account's provider queue: a backfill of two accounts completes on the worker process", async () => {
    const { env } = accountsFile();
    const taskQueue = uniqueTaskQueue('worker-accounts');
    const cwd = mkdtempSync(join(tmpdir(), 'recon-worker-accounts-'));
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('../../bin/recon.mjs', import.meta.url)), 'worker'],
      {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          ...env,
          DATABASE_URL: h.connectionString,
          TEMPORAL_ADDRESS: server.address,
          TEMPORAL_NAMESPACE: server.namespace,
          TEMPORAL_TASK_QUEUE: taskQueue,
          RECON_DATA_DIR: cwd,
          RECON_WORKER_SHUTDOWN_GRACE_SECONDS: '1',
        },
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const { handle } = await startBackfill(server.client, {
        from: '2026-04-01',
        to: '2026-04-03',
        taskQueue,
        accounts: ['ca-main', 'eu-main'],
        sources: ['report-transactions', 'legacy-transactions'],
      });
      const result = await handle.result();
      expect(result.accounts?.map((a) => [a.account, a.windowsDone, a.windowsFailed])).toEqual([
        ['ca-main', 1, 0],
        ['eu-main', 1, 0],
      ]);
      expect(output).toContain('provider queues of account(s) ca-main, us-main, eu-main');
      for (const secret of [...sandbox.secrets(), WRONG_SECRET]) expect(output).not.toContain(secret);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

/**
 * Secrets of every account (client secrets, legacy passwords, the wrong secret tried, every token
 * issued to any account) are in no workflow history, no alert and no table.
 */
async function expectNoSecretAnywhere(): Promise<void> {
  const secrets = [...sandbox.secrets(), WRONG_SECRET, ...sandbox.issuedTokens()];
  expect(sandbox.issuedTokens().length).toBeGreaterThanOrEqual(2);
  const texts: string[] = [];
  for await (const execution of server.client.workflow.list()) {
    texts.push(
      ...strings(
        await server.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory(),
      ),
    );
  }
  const histories = texts.join('\n');
  expect(histories).toContain('us-main');
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(
    h.db,
  );
  let stored = '';
  for (const { table_name } of tables.rows) {
    const dump = await sql<{
      text: string | null;
    }>`select string_agg(t::text, E'\n') as text from ${sql.table(table_name)} t`.execute(h.db);
    stored += dump.rows[0]?.text ?? '';
  }
  expect(stored.length).toBeGreaterThan(10_000);
  for (const secret of secrets) {
    expect(histories.includes(secret), 'a secret is in a workflow history').toBe(false);
    expect(stored.includes(secret), 'a secret is in the database').toBe(false);
    expect(JSON.stringify(alerts).includes(secret), 'a secret is in an alert').toBe(false);
  }
}
