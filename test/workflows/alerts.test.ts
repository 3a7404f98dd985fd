import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadSummary } from '../../domain/load-summary.ts';
import type { PullRequest, ReconcileRangeFn } from '../../activities/dependencies.ts';
import { createActivities } from '../../activities/index.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { recordCommittedLoad } from '../support/committed-load.ts';
import { loadConfig } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import { SOURCES } from '../../domain/records.ts';
import { startBackfill } from '../../workers/client/backfill.ts';
import { deliverAlert } from '../../reconcile/alerts/deliver.ts';
import { parseWebhooks } from '../../reconcile/alerts/webhooks.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import type { AlertInput } from '../../workflows/types.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * Alerts end to end: a real Temporal server and worker, a real database, and a webhook receiver on
 * 127.0.0.1 whose paths carry a secret token. A backfill window posts its run summary (Slack and
 * JSON shapes, counts, money per currency, the workbench link); a webhook answering 500 gets the
 * alert on a retry while the others are not posted twice, also across a worker restart; a failing
 * window sends a failure alert and a 400 is not retried; no webhook URL reaches a history or the
 * database.
 */
let server: DevServer;
let h: DatabaseHandle;
let receiver: Server;
let base: string;

/** Per path: the bodies received and the statuses still to answer (then 200). */
const received = new Map<string, unknown[]>();
const answers = new Map<string, number[]>();
/** Paths that answer 500 until released. */
const failing = new Set<string>();

const SECRET = 'T0SECRET-5b9e1c';
const path = (name: string) => `/hooks/${name}/${SECRET}`;

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    void body(req).then((json) => {
      const p = req.url ?? '';
      received.set(p, [...(received.get(p) ?? []), json]);
      const queued = answers.get(p) ?? [];
      const status = failing.has(p) ? 500 : (queued.shift() ?? 200);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  [server, h] = await Promise.all([startTestTemporal(), createTestDatabase()]);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const url = (name: string) => `${base}${path(name)}`;

function committedPull(fail?: () => Error | undefined) {
  return async (deps: { handle: DatabaseHandle }, req: PullRequest): Promise<LoadSummary> => {
    const failure = fail?.();
    if (failure) throw failure;
    return recordCommittedLoad(deps.handle.db, req, { rowsRead: 1, rowsInserted: 1 });
  };
}

/** A reconcile summary shaped as reconcileRange's: lifecycle counts and money by kind and currency. */
const reconcileRange: ReconcileRangeFn = async (_db, req) => ({
  runId: 4242,
  from: req.from,
  to: req.to,
  matched: { transactions: 10, returns: 0, notifications: 0, legacy: 0 },
  lifecycle: { opened: 3, reopened: 1, changed: 0, resolved: 2, unchanged: 5 },
  discrepancies: [
    { kind: 'amount_mismatch', currency: 'CAD', count: 2, amount_cents: 1234567 },
    { kind: 'amount_mismatch', currency: 'USD', count: 1, amount_cents: 500 },
    { kind: 'missing_in_ledger', currency: 'CAD', count: 1, amount_cents: 100 },
  ],
  totalDiscrepancies: 4,
});

function activitiesFor(webhooks: string, fail?: () => Error | undefined) {
  return createActivities({
    handle: h,
    provider: null,
    config: loadConfig({
      RECON_ALERT_WEBHOOKS: webhooks,
      RECON_WORKBENCH_URL: 'https://recon.example.test/',
    }),
    pullSource: committedPull(fail),
    reconcileRange,
  });
}

/** Every string inside a history, with the bytes of payloads and failures decoded as UTF-8. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('alerts after reconcile runs', () => {
  it('posts one summary per webhook (Slack and JSON), retries a 500 once, with counts, money per currency and the link', async () => {
    const taskQueue = uniqueTaskQueue('alerts');
    answers.set(path('flaky'), [500]);
    const webhooks = `slack:${url('slack')}, json:${url('json')},${url('flaky')}`;
    const worker = await startTestWorker(server, taskQueue, activitiesFor(webhooks));
    try {
      const { handle } = await startBackfill(server.client, {
        from: '2026-02-01',
        to: '2026-02-10',
        taskQueue,
        sources: [SOURCES[0]],
      });
      await handle.result();
    } finally {
      await worker.stop();
    }
    // The flaky webhook got it on the second attempt; the others were not posted again.
    expect(received.get(path('flaky'))).toHaveLength(2);
    expect(received.get(path('slack'))).toHaveLength(1);
    expect(received.get(path('json'))).toHaveLength(1);

    const json = received.get(path('json'))![0] as Record<string, unknown>;
    expect(json).toMatchObject({
      type: 'reconcile_run',
      from: '2026-02-01',
      to: '2026-02-10',
      workflow_id: 'window-2026-02-01-2026-02-10',
      started_by: 'backfill-2026-02-01-2026-02-10',
      reconcile_run_id: 4242,
      new: 3,
      reopened: 1,
      resolved: 2,
      discrepancies: [
        { kind: 'amount_mismatch', currency: 'CAD', count: 2, amount_cents: 1234567 },
        { kind: 'amount_mismatch', currency: 'USD', count: 1, amount_cents: 500 },
        { kind: 'missing_in_ledger', currency: 'CAD', count: 1, amount_cents: 100 },
      ],
      link: 'https://recon.example.test/?status=open&from=2026-02-01&to=2026-02-10',
    });
    expect(json.text).toContain('3 new, 1 reopened, 2 resolved');
    expect(received.get(path('flaky'))![1]).toEqual(json);

    const slack = received.get(path('slack'))![0] as { text: string; blocks: { type: string }[] };
    expect(slack.text).toContain('3 new, 1 reopened, 2 resolved');
    expect(slack.text).toContain('https://recon.example.test/?status=open&from=2026-02-01&to=2026-02-10');
    expect(slack.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context', 'section']);
    const blocks = JSON.stringify(slack.blocks);
    expect(blocks).toContain('amount_mismatch: 2 — 12,345.67 CAD');
    expect(blocks).toContain('amount_mismatch: 1 — 5.00 USD');
    expect(blocks).toContain('missing_in_ledger: 1 — 1.00 CAD');
    expect(blocks).toContain('<https://recon.example.test/?status=open&from=2026-02-01&to=2026-02-10|');

    // Recorded by hash: three webhooks, one alert, no URL.
    const rows = await h.db.selectFrom('alert_deliveries').selectAll().execute();
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.alert_key)).size).toBe(1);
    expect(rows.every((r) => r.kind === 'summary' && Number(r.reconcile_run_id) === 4242)).toBe(true);
    expect(rows.find((r) => r.webhook_sha256 === parseWebhooks(webhooks)[2]!.sha256)?.attempts).toBe(2);
  });

  it('a failing window sends a failure alert; a 400 is not retried', async () => {
    const taskQueue = uniqueTaskQueue('alerts-fail');
    answers.set(path('refuses'), [400, 400, 400]);
    const webhooks = `${url('failure')},slack:${url('refuses')}`;
    const worker = await startTestWorker(
      server,
      taskQueue,
      activitiesFor(webhooks, () => new ConfigError('RECON_CLIENT_ID is missing: set it')),
    );
    try {
      const { handle } = await startBackfill(server.client, {
        from: '2026-03-01',
        to: '2026-03-05',
        taskQueue,
        sources: [SOURCES[0]],
      });
      await expect(handle.result()).rejects.toThrow();
    } finally {
      await worker.stop();
    }
    expect(received.get(path('failure'))).toHaveLength(1);
    expect(received.get(path('failure'))![0]).toMatchObject({
      type: 'window_failed',
      from: '2026-03-01',
      to: '2026-03-05',
      started_by: 'backfill-2026-03-01-2026-03-05',
      link: 'https://recon.example.test/runs',
    });
    const failure = received.get(path('failure'))![0] as { message: string; text: string };
    expect(failure.message).toContain('RECON_CLIENT_ID is missing');
    expect(failure.text).toContain('FAILED after its retries');
    // Non-retryable: one request only.
    expect(received.get(path('refuses'))).toHaveLength(1);
  });

  it('does not post twice when the worker restarts between attempts', async () => {
    const taskQueue = uniqueTaskQueue('alerts-restart');
    failing.add(path('down'));
    const webhooks = `${url('up')},${url('down')}`;
    let worker = await startTestWorker(server, taskQueue, activitiesFor(webhooks));
    const { handle } = await startBackfill(server.client, {
      from: '2026-04-01',
      to: '2026-04-02',
      taskQueue,
      sources: [SOURCES[0]],
    });
    try {
      await until(() => (received.get(path('down'))?.length ?? 0) >= 1);
      await worker.stop();
      failing.delete(path('down'));
      // A new worker (new process state, same warehouse) runs the next attempt.
      worker = await startTestWorker(server, taskQueue, activitiesFor(webhooks));
      await handle.result();
    } finally {
      await worker.stop();
    }
    expect(received.get(path('up'))).toHaveLength(1);
    const down = received.get(path('down'))!;
    expect(down.length).toBeGreaterThanOrEqual(2);
    expect(down.at(-1)).toEqual(received.get(path('up'))![0]);
  });

  it('the nightly run posts the summary of its window too', async () => {
    const taskQueue = uniqueTaskQueue('alerts-nightly');
    const worker = await startTestWorker(server, taskQueue, activitiesFor(`json:${url('nightly')}`));
    try {
      await server.client.workflow.execute<typeof nightlyWorkflow>('nightlyWorkflow', {
        taskQueue,
        workflowId: `nightly-${taskQueue}`,
        args: [{ day: '2026-06-10', lookbackDays: 1, sources: [SOURCES[0]] }],
      });
    } finally {
      await worker.stop();
    }
    expect(received.get(path('nightly'))).toEqual([
      expect.objectContaining({
        type: 'reconcile_run',
        from: '2026-06-09',
        to: '2026-06-10',
        started_by: `nightly-${taskQueue}`,
        new: 3,
      }),
    ]);
  });

  it('a second delivery of the same alert (a retry, another worker) skips what was delivered', async () => {
    const webhooks = parseWebhooks(`${url('again')}`);
    const alert: AlertInput = {
      type: 'failure',
      from: '2026-05-01',
      to: '2026-05-01',
      workflowId: 'window-2026-05-01-2026-05-01',
      workflowRunId: 'run-again',
      startedBy: null,
      message: 'boom',
    };
    expect(await deliverAlert(h.db, alert, { webhooks })).toEqual({ webhooks: 1, delivered: 1, skipped: 0 });
    expect(await deliverAlert(h.db, alert, { webhooks })).toEqual({ webhooks: 1, delivered: 0, skipped: 1 });
    expect(received.get(path('again'))).toHaveLength(1);
  });

  it('keeps webhook URLs out of every workflow history and the database', async () => {
    const texts: string[] = [];
    let workflows = 0;
    for await (const execution of server.client.workflow.list()) {
      const history = await server.client.workflow
        .getHandle(execution.workflowId, execution.runId)
        .fetchHistory();
      texts.push(...strings(history));
      workflows++;
    }
    expect(workflows).toBeGreaterThanOrEqual(6);
    const all = texts.join('\n');
    // The alert activity did run (its input is in the histories), with ids and counts only.
    expect(all).toContain('sendAlert');
    expect(all).toContain('refused the alert with HTTP 400');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain('/hooks/');
    const dump = await sql<{
      t: string;
    }>`select string_agg(d::text, ' ') as t from alert_deliveries d`.execute(h.db);
    expect(dump.rows[0]!.t).not.toContain(SECRET);
    expect(dump.rows[0]!.t).not.toContain('127.0.0.1');
  });
});
