/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by exact assertions */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createToken } from '../../workbench/auth/accounts.ts';
import { parseFilter } from '../../reconcile/discrepancies/filter.ts';
import { liveTotals, worklistTotals } from '../../reconcile/discrepancies/read.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';

let h: DatabaseHandle;
let app: FastifyInstance;
let base: string;
let viewer: string;
let operator: string;

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // CSV and HTML stay text.
  }
  return { status: res.status, body: parsed };
}

// [account, transaction id, currency, difference in cents]
const ROWS: [string, string, string, number][] = [
  ['default', 'T-D1', 'CAD', 1000],
  ['default', 'T-D2', 'USD', 200],
  ['acme-2', 'T-A1', 'CAD', 5000],
  ['acme-2', 'T-A2', 'CAD', 700],
];

beforeAll(async () => {
  h = await createTestDatabase();
  for (const [account, id, currency, diff] of ROWS)
    await sql`insert into discrepancies (account, discrepancy_key, kind, rule, transaction_id, business_date,
        currency, expected_amount_cents, actual_amount_cents, difference_cents)
      values (${account}, ${`amount_mismatch:${id}`}, 'amount_mismatch', 'amount', ${id}, '2026-03-02',
        ${currency}, ${10000 + diff}, 10000, ${-diff})`.execute(h.db);
  viewer = (await createToken(h.db, { name: 'grafana', role: 'viewer' })).token;
  operator = (await createToken(h.db, { name: 'robot', role: 'operator' })).token;
  app = await buildWorkbench({ db: h.db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await app.close();
  await h.close();
});

describe('workbench: several provider accounts', () => {
  it('gives each item its account and totals per account and currency', async () => {
    const res = await call('GET', '/api/discrepancies', viewer);
    expect(res.status).toBe(200);
    expect(res.body.items.map((d: any) => [d.account, d.transaction_id]).sort()).toEqual([
      ['acme-2', 'T-A1'],
      ['acme-2', 'T-A2'],
      ['default', 'T-D1'],
      ['default', 'T-D2'],
    ]);
    expect(res.body.totals).toEqual([
      { account: 'acme-2', kind: 'amount_mismatch', currency: 'CAD', count: 2, cents: 5700 },
      { account: 'default', kind: 'amount_mismatch', currency: 'CAD', count: 1, cents: 1000 },
      { account: 'default', kind: 'amount_mismatch', currency: 'USD', count: 1, cents: 200 },
    ]);
  });

  it('filters the worklist, its totals and the CSV by account=', async () => {
    const res = await call('GET', '/api/discrepancies?account=acme-2', viewer);
    expect(res.status).toBe(200);
    expect(res.body.items.map((d: any) => [d.account, d.transaction_id])).toEqual([
      ['acme-2', 'T-A1'],
      ['acme-2', 'T-A2'],
    ]);
    expect(res.body.totals).toEqual([
      { account: 'acme-2', kind: 'amount_mismatch', currency: 'CAD', count: 2, cents: 5700 },
    ]);
    const csv = await call('GET', '/api/discrepancies.csv?account=default', viewer);
    expect(csv.status).toBe(200);
    const lines = (csv.body as string).trim().split('\r\n');
    expect(lines[0]!.split(',').at(-1)).toBe('account');
    expect(lines.slice(1).map((l) => l.split(',').at(-1))).toEqual(['default', 'default']);
  });

  it('sums the totals table and the discrepancies alike under an account filter', async () => {
    for (const q of [{ account: 'acme-2' }, { account: 'default', currency: 'USD' }, { account: 'none' }]) {
      const filter = parseFilter(q);
      expect(await worklistTotals(h.db, filter)).toEqual(await liveTotals(h.db, filter));
    }
  });

  it('acts in bulk on one account only', async () => {
    const res = await call('POST', '/api/discrepancies/bulk', operator, {
      filter: { account: 'acme-2' },
      action: 'ack',
      note: 'acme looks at these',
    });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    const acked = await call('GET', '/api/discrepancies?status=acknowledged', viewer);
    expect(acked.body.items.map((d: any) => d.account)).toEqual(['acme-2', 'acme-2']);
  });

  it('refuses an account name that cannot exist with a 400 that says what is allowed', async () => {
    for (const bad of ['Acme', 'a_b', 'x'.repeat(33), "a'b"]) {
      const res = await call('GET', `/api/discrepancies?account=${encodeURIComponent(bad)}`, viewer);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/is not an account name: use 1 to 32 of a-z, 0-9 and -/);
    }
    expect((await call('GET', '/api/discrepancies.csv?account=A', viewer)).status).toBe(400);
  });

  it('shows the account filter, the account column and per-account totals on the worklist page', async () => {
    const res = await call('GET', '/?account=acme-2', viewer);
    expect(res.status).toBe(200);
    const page = res.body as string;
    expect(page).toMatch(/<input\s+name="account"\s+id="f-account"[^>]*value="acme-2"/);
    expect(page).toContain('<th scope="col">Account</th>');
    expect(page).toContain('T-A1');
    expect(page).not.toContain('T-D1');
    expect(page).toMatch(/<a href="\/\?account=acme-2">acme-2<\/a>/);
  });
});
