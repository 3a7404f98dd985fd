/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by exact assertions */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser, createToken, disableUser, revokeToken } from '../../workbench/auth/accounts.ts';
import { temporalScheduleReader } from '../../workbench/queries/schedule.ts';
import { parseFilter } from '../../reconcile/discrepancies/filter.ts';
import { liveTotals, worklistTotals } from '../../reconcile/discrepancies/read.ts';
import { buildWorkbench, type WorkbenchOptions } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

let h: DatabaseHandle;
const servers: FastifyInstance[] = [];
let base: string;

const PASSWORD = 'correct horse battery';
const DAY = '2026-03-02';
const NOW = '2026-03-20T12:00:00Z';

async function serve(options: Partial<WorkbenchOptions> = {}): Promise<string> {
  const app = await buildWorkbench({ db: h.db, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  servers.push(app);
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

interface Client {
  cookie: string;
  csrf: string;
}

async function signIn(username: string, password = PASSWORD, at = base): Promise<Client> {
  const res = await fetch(`${at}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string };
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  return { cookie, csrf: body.csrfToken };
}

async function call(
  method: string,
  path: string,
  as?: Client | { bearer: string },
  body?: unknown,
  options: { csrf?: boolean; at?: string } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (as && 'bearer' in as) headers.authorization = `Bearer ${as.bearer}`;
  else if (as) {
    headers.cookie = as.cookie;
    if (options.csrf !== false) headers['x-csrf-token'] = as.csrf;
  }
  const res = await fetch(`${options.at ?? base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // CSV and text stay text.
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

async function idOf(transactionId: string, kind: string): Promise<number> {
  const row = await h.db
    .selectFrom('discrepancies')
    .select('discrepancy_id')
    .where('transaction_id', '=', transactionId)
    .where('kind', '=', kind)
    .executeTakeFirstOrThrow();
  return row.discrepancy_id;
}

let alice: Client;
let victor: Client;
let operatorToken: string;
let viewerToken: string;

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-OK', notify_status: null },
    { transaction_id: 'T-AMT1', amount_cents: 2000, notify_status: null }, // ledger 1000: stake 1000
    { transaction_id: 'T-AMT2', amount_cents: 5000, notify_status: null }, // ledger 1000: stake 4000
    { transaction_id: 'T-MIL', amount_cents: 7000, notify_status: null }, // no ledger entry: stake 7000
    { transaction_id: 'T-USD', amount_cents: 300, currency: 'USD', notify_status: null }, // currency_mismatch
    { transaction_id: 'T-OLD', amount_cents: 2000, notify_status: null, transaction_on: '2026-03-03' }, // stake 1000, later day
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-OK', transaction_id: 'T-OK' },
    { merchant_transaction_id: 'M-T-AMT1', transaction_id: 'T-AMT1' },
    { merchant_transaction_id: 'M-T-AMT2', transaction_id: 'T-AMT2' },
    { merchant_transaction_id: 'M-T-USD', transaction_id: 'T-USD', amount_cents: 300 },
    { merchant_transaction_id: 'M-T-OLD', transaction_id: 'T-OLD' },
  ]);
  await reconcileRange(h.db, { from: DAY, to: '2026-03-03', now: NOW });
  await addUser(h.db, { username: 'admin', role: 'admin', password: PASSWORD });
  await addUser(h.db, { username: 'alice', role: 'operator', password: PASSWORD });
  await addUser(h.db, { username: 'bob', role: 'operator', password: PASSWORD });
  await addUser(h.db, { username: 'victor', role: 'viewer', password: PASSWORD });
  operatorToken = (await createToken(h.db, { name: 'robot', role: 'operator' })).token;
  viewerToken = (await createToken(h.db, { name: 'grafana', role: 'viewer' })).token;
  base = await serve();
  alice = await signIn('alice');
  victor = await signIn('victor');
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await h.close();
});

const ENDPOINTS: [string, string, unknown?][] = [
  ['GET', '/api/session'],
  ['DELETE', '/api/session'],
  ['GET', '/api/discrepancies'],
  ['GET', '/api/discrepancies.csv'],
  ['GET', '/api/discrepancies/1'],
  ['POST', '/api/discrepancies/1/ack', { note: 'x' }],
  ['POST', '/api/discrepancies/1/assign', { user: 'alice' }],
  ['POST', '/api/discrepancies/1/comment', { text: 'x' }],
  ['POST', '/api/discrepancies/1/resolve', { reason: 'accepted', note: '' }],
  ['POST', '/api/discrepancies/1/reopen', { note: '' }],
  ['POST', '/api/discrepancies/bulk', { ids: [1], action: 'ack', note: 'x' }],
  ['GET', '/api/coverage'],
  ['GET', '/api/runs'],
  ['GET', '/api/loads'],
  ['GET', '/api/schedule'],
  ['GET', '/metrics'],
];
const OPERATOR_ENDPOINTS = ENDPOINTS.filter(([m, p]) => m === 'POST' && p.startsWith('/api/discrepancies'));

describe('workbench API: authentication and roles', () => {
  it('answers 401 on every endpoint without credentials, and with a wrong or revoked token', async () => {
    const { tokenId, token } = await createToken(h.db, { name: 'old', role: 'admin' });
    await revokeToken(h.db, tokenId);
    for (const [method, path, body] of ENDPOINTS) {
      expect([method, path, (await call(method, path, undefined, body)).status]).toEqual([method, path, 401]);
      expect((await call(method, path, { bearer: 'rwb_wrong' }, body)).status).toBe(401);
      expect((await call(method, path, { bearer: token }, body)).status).toBe(401);
    }
  });

  it('answers 403 to a viewer (session or token) on every action, and lets it read', async () => {
    expect(OPERATOR_ENDPOINTS).toHaveLength(6);
    for (const [method, path, body] of OPERATOR_ENDPOINTS) {
      const bySession = await call(method, path, victor, body);
      expect([path, bySession.status, bySession.body.error]).toEqual([path, 403, 'forbidden']);
      expect((await call(method, path, { bearer: viewerToken }, body)).status).toBe(403);
    }
    for (const [method, path] of ENDPOINTS.filter(([m]) => m === 'GET'))
      expect([path, (await call(method, path, victor)).status]).toEqual([path, 200]);
  });

  it('sets an HttpOnly SameSite=Strict session cookie (not Secure over plain HTTP) and signs out', async () => {
    const res = await fetch(`${base}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bob', password: PASSWORD }),
    });
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(
      /^recon_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/,
    );
    const body = (await res.json()) as { role: string; csrfToken: string };
    expect(body.role).toBe('operator');
    const bob = { cookie: cookie.split(';')[0]!, csrf: body.csrfToken };
    expect((await call('GET', '/api/session', bob)).body.username).toBe('bob');
    expect((await call('DELETE', '/api/session', bob, undefined, { csrf: false })).status).toBe(403);
    expect((await call('DELETE', '/api/session', bob)).status).toBe(204);
    expect((await call('GET', '/api/session', bob)).status).toBe(401);
  });

  it('refuses a state change made with a session but without the CSRF token, or with another session’s', async () => {
    const id = await idOf('T-AMT2', 'amount_mismatch');
    const without = await call(
      'POST',
      `/api/discrepancies/${id}/comment`,
      alice,
      { text: 'hi' },
      { csrf: false },
    );
    expect([without.status, without.body.error]).toEqual([403, 'csrf']);
    const crossed = await call(
      'POST',
      `/api/discrepancies/${id}/comment`,
      { cookie: alice.cookie, csrf: victor.csrf },
      {
        text: 'hi',
      },
    );
    expect(crossed.status).toBe(403);
    expect((await call('POST', `/api/discrepancies/${id}/comment`, alice, { text: 'hi' })).status).toBe(200);
    // A machine's Bearer token carries no ambient credential: no CSRF token needed.
    expect(
      (await call('POST', `/api/discrepancies/${id}/comment`, { bearer: operatorToken }, { text: 'robot' }))
        .status,
    ).toBe(200);
  });

  it('throttles failed sign-ins per user name and address, even with the right password afterwards', async () => {
    await addUser(h.db, { username: 'mallory', role: 'viewer', password: PASSWORD });
    // A long first delay, so that the machine's speed cannot let the sixth attempt through.
    const at = await serve({ sessions: { throttle: { firstDelaySeconds: 300 } } });
    for (let i = 0; i < 5; i++) {
      const res = await call(
        'POST',
        '/api/session',
        undefined,
        { username: 'mallory', password: `wrong ${i}` },
        { at },
      );
      expect(res.status).toBe(401);
    }
    const locked = await call(
      'POST',
      '/api/session',
      undefined,
      { username: 'mallory', password: PASSWORD },
      { at },
    );
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(200);
    // Other names are not affected.
    await signIn('admin');
  });

  it('expires an idle session, and ends the sessions of a disabled user', async () => {
    const at = await serve({ sessions: { idleSeconds: 1 } });
    const s = await signIn('victor', PASSWORD, at);
    expect((await call('GET', '/api/discrepancies', s, undefined, { at })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await call('GET', '/api/discrepancies', s, undefined, { at })).status).toBe(401);

    await addUser(h.db, { username: 'temp', role: 'operator', password: PASSWORD });
    const t = await signIn('temp');
    await disableUser(h.db, 'temp');
    expect((await call('GET', '/api/discrepancies', t)).status).toBe(401);
    expect(
      (await call('POST', '/api/session', undefined, { username: 'temp', password: PASSWORD })).status,
    ).toBe(401);
  });

  it('trusts the SSO header only when configured, and still asks for CSRF on state changes', async () => {
    const header = { 'x-forwarded-user': 'alice' };
    expect((await fetch(`${base}/api/session`, { headers: header })).status).toBe(401);
    const at = await serve({ trustedUserHeader: 'X-Forwarded-User', trustedProxies: ['127.0.0.1'] });
    const res = await fetch(`${at}/api/session`, { headers: header });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { username: string }).username).toBe('alice');
    expect((await fetch(`${at}/api/session`, { headers: { 'x-forwarded-user': 'nobody' } })).status).toBe(
      401,
    );
    const post = await fetch(`${at}/api/discrepancies/1/comment`, {
      method: 'POST',
      headers: { ...header, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x' }),
    });
    expect(post.status).toBe(403);
  });
});

describe('workbench API: worklist', () => {
  it('orders per currency, money at stake first, then the oldest, with totals by kind and currency', async () => {
    const res = await call('GET', '/api/discrepancies', victor);
    expect(res.status).toBe(200);
    const order = res.body.items.map((d: any) => [
      d.kind,
      d.transaction_id,
      d.currency,
      d.stake_cents,
      d.business_date,
    ]);
    expect(order).toEqual([
      ['missing_in_ledger', 'T-MIL', 'CAD', 7000, DAY],
      ['amount_mismatch', 'T-AMT2', 'CAD', 4000, DAY],
      ['amount_mismatch', 'T-AMT1', 'CAD', 1000, DAY],
      ['amount_mismatch', 'T-OLD', 'CAD', 1000, '2026-03-03'],
      ['currency_mismatch', 'T-USD', 'USD', 300, DAY],
    ]);
    expect(res.body.items[1]).toMatchObject({
      expected_amount_cents: 5000,
      actual_amount_cents: 1000,
      difference_cents: -4000,
      merchant_transaction_id: 'M-T-AMT2',
      assignee: null,
      status: 'open',
    });
    expect(res.body.totals).toEqual([
      { account: 'default', kind: 'missing_in_ledger', currency: 'CAD', count: 1, cents: 7000 },
      { account: 'default', kind: 'amount_mismatch', currency: 'CAD', count: 3, cents: 6000 },
      { account: 'default', kind: 'currency_mismatch', currency: 'USD', count: 1, cents: 300 },
    ]);
    expect(res.body.next_cursor).toBeNull();
  });

  it('pages by cursor through the same order, totals on the first page only', async () => {
    const all = (await call('GET', '/api/discrepancies', victor)).body.items.map((d: any) => d.id);
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : '';
      const page = await call('GET', `/api/discrepancies?limit=2${q}`, victor);
      expect(page.status).toBe(200);
      expect(page.body.totals === null).toBe(cursor !== null);
      seen.push(...page.body.items.map((d: any) => d.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
    expect((await call('GET', '/api/discrepancies?cursor=bm9wZQ', victor)).status).toBe(400);
  });

  it('filters by kind, currency, dates, minimum at stake, search, and refuses bad values in one line', async () => {
    const ids = async (q: string) =>
      (await call('GET', `/api/discrepancies?${q}`, victor)).body.items.map((d: any) => d.transaction_id);
    expect(await ids('kind=amount_mismatch')).toEqual(['T-AMT2', 'T-AMT1', 'T-OLD']);
    expect(await ids('currency=usd')).toEqual(['T-USD']);
    expect(await ids('from=2026-03-03&to=2026-03-03')).toEqual(['T-OLD']);
    expect(await ids('min_cents=4000')).toEqual(['T-MIL', 'T-AMT2']);
    expect(await ids('q=M-T-AMT1')).toEqual(['T-AMT1']);
    expect(await ids('q=T-MIL')).toEqual(['T-MIL']);
    expect(await ids('kind=amount_mismatch,missing_in_ledger&min_cents=1001')).toEqual(['T-MIL', 'T-AMT2']);
    const bad = await call('GET', '/api/discrepancies?from=2026-03-05&to=2026-03-01', victor);
    expect([bad.status, bad.body.message]).toEqual([400, 'from=2026-03-05 is after to=2026-03-01']);
    expect((await call('GET', '/api/discrepancies?status=weird', victor)).status).toBe(400);
    expect((await call('GET', '/api/discrepancies?nope=1', victor)).status).toBe(400);
  });

  it('exports the filter as CSV in worklist order', async () => {
    const res = await call('GET', '/api/discrepancies.csv?currency=CAD', victor);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (res.body as string).trim().split('\r\n');
    expect(lines[0]).toBe(
      'discrepancy_id,kind,rule,status,business_date,currency,expected_amount,actual_amount,difference,at_stake,transaction_id,merchant_transaction_id,return_transaction_id,assignee,first_seen_at,acknowledged_by,note,resolved_at,resolution,expected_amount_cents,actual_amount_cents,difference_cents,stake_cents,expected,actual,account',
    );
    expect(lines.slice(1).map((l) => l.split(',')[10])).toEqual(['T-MIL', 'T-AMT2', 'T-AMT1', 'T-OLD']);
  });
});

describe('workbench API: one discrepancy', () => {
  it('shows the evidence of each side, the field diff, the rule in words, lineage and events', async () => {
    const id = await idOf('T-AMT1', 'amount_mismatch');
    const res = await call('GET', `/api/discrepancies/${id}`, victor);
    expect(res.status).toBe(200);
    const d = res.body;
    expect(d.discrepancy).toMatchObject({ id, kind: 'amount_mismatch', currency: 'CAD', stake_cents: 1000 });
    expect(d.evidence.provider.map((p: any) => [p.transaction_id, p.amount_cents, p.source])).toEqual([
      ['T-AMT1', 2000, 'report-transactions'],
    ]);
    expect(d.evidence.provider[0].raw).toBeUndefined();
    expect(d.evidence.ledger.map((l: any) => [l.merchant_transaction_id, l.amount_cents])).toEqual([
      ['M-T-AMT1', 1000],
    ]);
    expect(d.evidence.loads.map((l: any) => l.source)).toEqual(['report-transactions']);
    expect(d.diff).toEqual({
      expected_side: 'provider report',
      actual_side: 'merchant ledger',
      fields: [{ field: 'amount_cents', expected: 2000, actual: 1000, differs: true }],
    });
    expect(d.rule.means).toBe('Both sides know the transaction but disagree on the amount.');
    expect(d.events.map((e: any) => [e.event, e.actor])).toEqual([['opened', null]]);
    expect((await call('GET', '/api/discrepancies/999999', victor)).status).toBe(404);
  });
});

describe('workbench API: actions', () => {
  it('records every action with the acting user; concurrent actions on one discrepancy all land', async () => {
    const id = await idOf('T-AMT2', 'amount_mismatch');
    const before = (await call('GET', `/api/discrepancies/${id}`, victor)).body.events.length;
    const bob = await signIn('bob');
    const requests = Array.from({ length: 24 }, (_, i) => {
      const who = i % 3 === 0 ? { bearer: operatorToken } : i % 3 === 1 ? alice : bob;
      const kind = i % 4;
      if (kind === 0) return call('POST', `/api/discrepancies/${id}/ack`, who, { note: `ack ${i}` });
      if (kind === 1)
        return call('POST', `/api/discrepancies/${id}/assign`, who, { user: i % 2 ? 'alice' : 'bob' });
      return call('POST', `/api/discrepancies/${id}/comment`, who, { text: `comment ${i}` });
    });
    const results = await Promise.all(requests);
    expect(results.map((r) => r.status)).toEqual(Array(24).fill(200));
    const events = (await call('GET', `/api/discrepancies/${id}`, victor)).body.events.slice(before);
    expect(events).toHaveLength(24);
    expect(new Set(events.map((e: any) => e.actor))).toEqual(new Set(['alice', 'bob', 'token:robot']));
    expect(events.filter((e: any) => e.event === 'commented')).toHaveLength(12);
    expect(events.filter((e: any) => e.event === 'acknowledged')).toHaveLength(6);
    const row = await h.db
      .selectFrom('discrepancies')
      .selectAll()
      .where('discrepancy_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('acknowledged');
  });

  it('refuses an unknown assignee, a second resolve, and a reopen of an unresolved discrepancy', async () => {
    const id = await idOf('T-MIL', 'missing_in_ledger');
    expect((await call('POST', `/api/discrepancies/${id}/assign`, alice, { user: 'ghost' })).status).toBe(
      400,
    );
    expect((await call('POST', `/api/discrepancies/${id}/reopen`, alice, { note: '' })).status).toBe(409);
    expect((await call('POST', `/api/discrepancies/${id}/resolve`, alice, { reason: 'nope' })).status).toBe(
      400,
    );
  });

  it('bulk-acknowledges and bulk-assigns a filter or a list of ids, one event each', async () => {
    const res = await call('POST', '/api/discrepancies/bulk', alice, {
      filter: { kind: 'amount_mismatch' },
      action: 'assign',
      user: 'bob',
    });
    expect(res.body).toEqual({ count: 3 });
    const assigned = await call('GET', '/api/discrepancies?assignee=bob', victor);
    expect(assigned.body.items.map((d: any) => d.transaction_id)).toEqual(['T-AMT2', 'T-AMT1', 'T-OLD']);
    const usd = await idOf('T-USD', 'currency_mismatch');
    expect(
      (await call('POST', '/api/discrepancies/bulk', alice, { ids: [usd], action: 'ack', note: 'fx desk' }))
        .body,
    ).toEqual({
      count: 1,
    });
    const ev = await sql<{ event: string; actor: string }>`select event, actor from discrepancy_events
      where discrepancy_id = ${usd} order by event_id`.execute(h.db);
    expect(ev.rows).toEqual([
      { event: 'opened', actor: null },
      { event: 'acknowledged', actor: 'alice' },
    ]);
    expect((await call('POST', '/api/discrepancies/bulk', alice, { action: 'ack' })).status).toBe(400);
  });

  it('a reconcile run after people acted keeps their acknowledgement, assignee, note and resolutions; fixed_in_ledger is checked', async () => {
    const amt1 = await idOf('T-AMT1', 'amount_mismatch');
    const old = await idOf('T-OLD', 'amount_mismatch');
    const mil = await idOf('T-MIL', 'missing_in_ledger');
    const amt2 = await idOf('T-AMT2', 'amount_mismatch');
    expect((await call('POST', `/api/discrepancies/${amt1}/ack`, alice, { note: 'looking' })).status).toBe(
      200,
    );
    expect(
      (
        await call('POST', `/api/discrepancies/${mil}/resolve`, alice, {
          reason: 'accepted',
          note: 'test txn',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call('POST', `/api/discrepancies/${amt2}/resolve`, alice, {
          reason: 'fixed_in_ledger',
          note: '',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call('POST', `/api/discrepancies/${old}/resolve`, alice, {
          reason: 'fixed_in_ledger',
          note: '',
        })
      ).status,
    ).toBe(200);
    // The ledger of T-OLD is really fixed; T-AMT2's is not.
    await h.db
      .updateTable('merchant_ledger')
      .set({ amount_cents: 2000 })
      .where('merchant_transaction_id', '=', 'M-T-OLD')
      .execute();

    await reconcileRange(h.db, { from: DAY, to: '2026-03-03', now: '2026-03-21T12:00:00Z' });
    const rows = await h.db
      .selectFrom('discrepancies')
      .select([
        'discrepancy_id',
        'status',
        'note',
        'acknowledged_by',
        'assignee',
        'resolution',
        'resolved_by',
      ])
      .where('discrepancy_id', 'in', [amt1, mil, amt2, old])
      .orderBy('discrepancy_id')
      .execute();
    const by = new Map(rows.map((r) => [r.discrepancy_id, r]));
    expect(by.get(amt1)).toMatchObject({
      status: 'acknowledged',
      note: 'looking',
      acknowledged_by: 'alice',
      assignee: 'bob',
    });
    expect(by.get(mil)).toMatchObject({ status: 'resolved', resolution: 'accepted', resolved_by: 'alice' });
    expect(by.get(amt2)).toMatchObject({ status: 'open', resolution: null, assignee: 'bob' });
    expect(by.get(old)).toMatchObject({ status: 'resolved', resolution: 'fixed_in_ledger' });
    const last = async (id: number) =>
      (
        await sql<{
          event: string;
          actor: string | null;
          details: any;
        }>`select event, actor, details from discrepancy_events
        where discrepancy_id = ${id} order by event_id desc limit 1`.execute(h.db)
      ).rows[0]!;
    expect(await last(amt1)).toMatchObject({ event: 'acknowledged', actor: 'alice' });
    expect(await last(mil)).toMatchObject({ event: 'resolved', actor: 'alice' });
    expect(await last(amt2)).toMatchObject({
      event: 'reopened',
      actor: null,
      details: {
        resolution: 'fixed_in_ledger',
        reason: 'still found after it was resolved as fixed_in_ledger',
      },
    });
    expect(await last(old)).toMatchObject({ event: 'verified', actor: null });
    // Verified once: another run adds nothing to it.
    await reconcileRange(h.db, { from: DAY, to: '2026-03-03', now: '2026-03-22T12:00:00Z' });
    const verified = await sql<{ n: number }>`select count(*)::int as n from discrepancy_events
      where discrepancy_id = ${old} and event = 'verified'`.execute(h.db);
    expect(verified.rows[0]!.n).toBe(1);
  });
});

describe('workbench totals', () => {
  it('kept by the statement triggers, agree with counting the discrepancies, after runs and actions', async () => {
    const filters = [
      {},
      { status: 'all' },
      { status: 'resolved' },
      { status: 'acknowledged' },
      { status: 'open', currency: 'CAD' },
      { kind: 'amount_mismatch,currency_mismatch', from: DAY, to: DAY },
      { from: '2026-03-03' },
    ];
    for (const f of filters) {
      const filter = parseFilter(f);
      expect([f, await worklistTotals(h.db, filter)]).toEqual([f, await liveTotals(h.db, filter)]);
    }
    expect(
      (await worklistTotals(h.db, parseFilter({ status: 'all' }))).reduce((n, t) => n + t.count, 0),
    ).toBe(5);
  });
});

describe('workbench API: runs, loads, coverage, description, health', () => {
  it('lists runs and loads newest first and shows coverage per Eastern day', async () => {
    const runs = (await call('GET', '/api/runs', victor)).body.items;
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs[0].run_id).toBeGreaterThan(runs.at(-1).run_id - 1);
    const loads = (await call('GET', '/api/loads', victor)).body.items;
    expect(loads[0]).toMatchObject({ source: 'report-transactions', status: 'committed' });
    const cov = await call('GET', '/api/coverage?from=2026-03-01&to=2026-03-03', victor);
    expect(cov.status).toBe(200);
    expect(cov.body.days.map((d: any) => [d.date, d.business_day, d.runs.length > 0])).toEqual([
      ['2026-03-01', false, false],
      ['2026-03-02', true, true],
      ['2026-03-03', true, true],
    ]);
  });

  it("says when the nightly schedule's state cannot be read, naming the address", async () => {
    expect((await call('GET', '/api/schedule', victor)).body).toEqual({
      schedule_id: 'recon-nightly',
      reachable: false,
      message: 'no Temporal cluster configured for this server',
    });
    const at = await serve({
      schedule: temporalScheduleReader({ temporalAddress: '127.0.0.1:1', temporalNamespace: 'default' }),
    });
    const v = await signIn('victor', PASSWORD, at);
    expect((await call('GET', '/api/schedule', v, undefined, { at })).body).toEqual({
      schedule_id: 'recon-nightly',
      reachable: false,
      message: 'Temporal at 127.0.0.1:1 did not answer: check that it runs and TEMPORAL_ADDRESS',
    });
  });

  it('serves the OpenAPI document generated from the route schemas, and /health', async () => {
    const doc = (await call('GET', '/api/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    for (const p of [
      '/api/discrepancies',
      '/api/discrepancies/{id}',
      '/api/discrepancies/{id}/resolve',
      '/api/session',
      '/api/coverage',
    ])
      expect(Object.keys(doc.paths)).toContain(p);
    expect(
      doc.paths['/api/discrepancies/{id}/resolve'].post.requestBody.content['application/json'].schema
        .properties.reason.enum,
    ).toEqual(['accepted', 'fixed_in_ledger', 'provider_error']);
    expect((await call('GET', '/health')).body).toEqual({ alive: true, ready: true, database: 'ok' });
  });
});
