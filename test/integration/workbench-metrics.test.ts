import type { FastifyInstance, HTTPMethods } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { freePort } from '../../db/free-port.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createToken } from '../../workbench/auth/accounts.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { sample } from '../support/prometheus.ts';
import { type ReconProcess, spawnRecon, waitFor } from '../support/recon-process.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

/**
 * The workbench's /metrics as Prometheus scrapes it: a viewer token, requests by route pattern (never
 * the URL), their durations, the actions taken, and the open discrepancies read from the warehouse.
 */
let h: DatabaseHandle;
let app: FastifyInstance;
let base: string;
let viewerToken: string;
let operatorToken: string;

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-OK', notify_status: null },
    { transaction_id: 'T-AMT1', amount_cents: 2000, notify_status: null },
    { transaction_id: 'T-AMT2', amount_cents: 5000, notify_status: null },
    { transaction_id: 'T-MIL', amount_cents: 7000, notify_status: null },
    { transaction_id: 'T-MIL2', amount_cents: 900, currency: 'USD', notify_status: null },
    { transaction_id: 'T-USD', amount_cents: 300, currency: 'USD', notify_status: null },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-OK', transaction_id: 'T-OK' },
    { merchant_transaction_id: 'M-T-AMT1', transaction_id: 'T-AMT1' },
    { merchant_transaction_id: 'M-T-AMT2', transaction_id: 'T-AMT2' },
    { merchant_transaction_id: 'M-T-USD', transaction_id: 'T-USD', amount_cents: 300 },
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
  viewerToken = (await createToken(h.db, { name: 'prometheus', role: 'viewer' })).token;
  operatorToken = (await createToken(h.db, { name: 'robot', role: 'operator' })).token;
  app = await buildWorkbench({ db: h.db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await app?.close();
  await h?.close();
});

async function call(method: string, path: string, token?: string, body?: unknown): Promise<number> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

async function scrape(url = `${base}/metrics`, token: string | undefined = viewerToken): Promise<string> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** Every sample of one metric, as `label=value,...` (sorted) to value. */
function samples(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m && m[1] === name)
      out[
        (m[2] ?? '')
          .split(/,(?=\w+=")/)
          .sort()
          .join(',')
      ] = Number(m[3]);
  }
  return out;
}

async function openCountsInTable(): Promise<Record<string, number>> {
  const { rows } = await sql<{ kind: string; currency: string; status: string; n: number }>`
    select kind, currency, status, count(*)::int as n from discrepancies
    where resolved_at is null group by kind, currency, status`.execute(h.db);
  return Object.fromEntries(
    rows.map((r) => [`currency="${r.currency}",kind="${r.kind}",status="${r.status}"`, r.n]),
  );
}

async function idOf(transactionId: string): Promise<number> {
  const row = await h.db
    .selectFrom('discrepancies')
    .select('discrepancy_id')
    .where('transaction_id', '=', transactionId)
    .executeTakeFirstOrThrow();
  return row.discrepancy_id;
}

describe('workbench /metrics', () => {
  it('counts requests by route pattern and status, times them, and counts actions', async () => {
    const amt1 = await idOf('T-AMT1');
    const amt2 = await idOf('T-AMT2');
    const mil = await idOf('T-MIL');
    expect(await call('GET', '/api/discrepancies', viewerToken)).toBe(200);
    expect(await call('GET', '/api/discrepancies?currency=USD', viewerToken)).toBe(200);
    expect(await call('GET', `/api/discrepancies/${amt1}`, viewerToken)).toBe(200);
    expect(await call('GET', `/api/discrepancies/${amt2}`, viewerToken)).toBe(200);
    expect(await call('GET', '/api/discrepancies/987654', viewerToken)).toBe(404);
    expect(await call('POST', `/api/discrepancies/${amt1}/ack`, operatorToken, { note: 'seen' })).toBe(200);
    expect(await call('POST', `/api/discrepancies/${amt2}/reopen`, operatorToken, { note: '' })).toBe(409);
    expect(await call('POST', `/api/discrepancies/${mil}/comment`, operatorToken, { text: 'asked' })).toBe(
      200,
    );
    expect(
      await call('POST', '/api/discrepancies/bulk', operatorToken, {
        ids: [amt1, amt2, mil],
        action: 'ack',
        note: 'seen',
      }),
    ).toBe(200);
    expect(await call('GET', '/no/such/page/42')).toBe(404);
    expect(await call('GET', '/metrics')).toBe(401);
    expect(await call('GET', '/metrics', 'rwb_wrong')).toBe(401);

    const text = await scrape();
    const requests = (method: string, route: string, status: string) =>
      sample(text, 'recon_workbench_requests_total', { method, route, status });
    expect(requests('GET', '/api/discrepancies', '200')).toBe(2);
    expect(requests('GET', '/api/discrepancies/:id', '200')).toBe(2);
    expect(requests('GET', '/api/discrepancies/:id', '404')).toBe(1);
    expect(requests('POST', '/api/discrepancies/:id/ack', '200')).toBe(1);
    expect(requests('POST', '/api/discrepancies/:id/reopen', '409')).toBe(1);
    expect(requests('POST', '/api/discrepancies/bulk', '200')).toBe(1);
    expect(requests('GET', 'unmatched', '404')).toBe(1);
    expect(requests('GET', '/metrics', '401')).toBe(2);

    // Route patterns only: every route label is a route of the app (or `unmatched`), no id or query.
    const routes = Object.keys(samples(text, 'recon_workbench_requests_total')).map((labels) => ({
      method: /method="([^"]*)"/.exec(labels)![1]!,
      url: /route="([^"]*)"/.exec(labels)![1]!,
    }));
    expect(routes.length).toBeGreaterThanOrEqual(8);
    for (const r of routes)
      expect([
        r,
        r.url === 'unmatched' || app.hasRoute({ method: r.method as HTTPMethods, url: r.url }),
      ]).toEqual([r, true]);
    expect(routes.filter((r) => /\d/.test(r.url))).toEqual([]);
    expect(text).not.toContain('currency=USD');
    expect(text).not.toContain('/no/such/page');

    const duration = (suffix: string, labels: Record<string, string>) =>
      sample(text, `recon_workbench_request_duration_seconds${suffix}`, labels);
    const list = { method: 'GET', route: '/api/discrepancies' };
    expect(duration('_count', list)).toBe(2);
    expect(duration('_bucket', { ...list, le: '+Inf' })).toBe(2);
    expect(duration('_sum', list)).toBeGreaterThan(0);
    expect(duration('_count', { method: 'GET', route: '/api/discrepancies/:id' })).toBe(3);

    const actions = (action: string, via: string) =>
      sample(text, 'recon_workbench_discrepancy_actions_total', { action, via });
    expect([actions('ack', 'single'), actions('comment', 'single'), actions('ack', 'bulk')]).toEqual([
      1, 1, 3,
    ]);

    expect(text).toMatch(/^recon_process_start_time_seconds \d+/m);
    expect(text).not.toContain('recon_workbench_uptime_seconds');
  });

  it('reports the open discrepancies of the warehouse per kind, currency and status, as the table has them', async () => {
    await call('POST', `/api/discrepancies/${await idOf('T-AMT2')}/resolve`, operatorToken, {
      reason: 'accepted',
      note: '',
    });
    const table = await openCountsInTable();
    const kinds = new Set(Object.keys(table).map((k) => /kind="([^"]*)"/.exec(k)![1]));
    const currencies = new Set(Object.keys(table).map((k) => /currency="([^"]*)"/.exec(k)![1]));
    expect(kinds.size).toBeGreaterThanOrEqual(3);
    expect([...currencies].sort()).toEqual(['CAD', 'USD']);
    expect(Object.keys(table).some((k) => k.includes('status="acknowledged"'))).toBe(true);

    const text = await scrape();
    expect(samples(text, 'recon_open_discrepancies')).toEqual(table);
    expect(sample(text, 'recon_warehouse_up', {})).toBe(1);
  });
});

describe('recon serve with RECON_METRICS_PORT', () => {
  let workbench: ReconProcess | undefined;
  afterAll(async () => {
    if (workbench?.alive()) {
      workbench.child.kill('SIGTERM');
      await workbench.done;
    }
  });

  it('serves the same registry without sign-in on its own port', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    workbench = spawnRecon(h.connectionString, ['serve', '--port', String(port)], {
      RECON_METRICS_PORT: String(metricsPort),
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    await waitFor('recon serve to print its metrics address', () =>
      workbench!.alive()
        ? workbench!.stdout().includes(`metrics at ${metricsUrl}`)
        : Promise.reject(new Error(workbench!.output())),
    );
    const at = `http://127.0.0.1:${port}`;
    expect((await fetch(`${at}/health`)).status).toBe(200);
    expect((await fetch(`${at}/api/discrepancies/1`)).status).toBe(401);
    expect((await fetch(`${at}/metrics`)).status).toBe(401);

    const text = await scrape(metricsUrl, undefined);
    const requests = (route: string, status: string) =>
      sample(text, 'recon_workbench_requests_total', { method: 'GET', route, status });
    expect([
      requests('/health', '200'),
      requests('/api/discrepancies/:id', '401'),
      requests('/metrics', '401'),
    ]).toEqual([1, 1, 1]);
    expect(samples(text, 'recon_open_discrepancies')).toEqual(await openCountsInTable());
  });
});
