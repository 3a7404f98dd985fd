/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is read as plain JSON */
/**
 * No input gives a 500, redirects stay on this site, answers carry their headers, and the CSV export
 * defuses formulas (issue 26, sections 4 and 5). The fuzz test at the end is generated from the
 * OpenAPI document the server serves: every route and parameter it lists gets every hostile value,
 * so a new route is covered without being listed here.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser, createToken } from '../../workbench/auth/accounts.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';
import { type Answer, as, call, type SignedIn, signIn, useWorkbench } from '../support/workbench-http.ts';

const h = useTestDatabase();
const PASSWORD = 'correct horse battery';
let admin: { authorization: string };
let alice: SignedIn;
let someId: number;
const serverLog: string[] = [];
const server = useWorkbench(h, { log: (line) => serverLog.push(line) });

/** Transaction ids that spreadsheets would run as formulas once they normalise the cell. */
const FORMULAS = [' =1+2', '\t=3+4', '＝5+6', '＠SUM(7)', '＋8', '－9', ' \u3000@10'];

beforeAll(async () => {
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-1', notify_status: null },
    ...FORMULAS.map((id) => ({ transaction_id: id, notify_status: null })),
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
  await addUser(h.db, { username: 'alice', role: 'operator', password: PASSWORD });
  admin = { authorization: `Bearer ${(await createToken(h.db, { name: 'fuzz', role: 'admin' })).token}` };
  const s = await signIn(server.base, 'alice', PASSWORD);
  if (typeof s === 'number') throw new Error(`sign-in answered ${s}`);
  alice = s;
  someId = (await h.db.selectFrom('discrepancies').select('discrepancy_id').executeTakeFirstOrThrow())
    .discrepancy_id;
});

const get = (path: string, headers: Record<string, string> = admin) =>
  call(server.base, 'GET', path, { headers });
const post = (path: string, rawBody: string) =>
  call(server.base, 'POST', path, { headers: as(alice), rawBody });

function oneLineError(a: Answer): void {
  expect(a.status, `${a.text} ${serverLog.join(' | ')}`).toBe(400);
  expect(a.json?.error ?? 'html', a.text).toBeTruthy();
  if (a.json) expect(a.json.message).not.toMatch(/[\r\n]/);
}

describe('malformed input answers 400 in one line, never 500', () => {
  it('treats a malformed session cookie as no session', async () => {
    const cookie = { cookie: 'recon_session=%E0%A4%A' };
    expect((await get('/api/discrepancies', cookie)).status).toBe(401);
    const page = await get('/', cookie);
    expect([page.status, page.headers.get('location')]).toEqual([302, '/sign-in?next=%2F']);
  });

  it('refuses dates that do not exist, such as 0000-01-01', async () => {
    for (const path of [
      '/api/discrepancies?from=0000-01-01',
      '/api/discrepancies?to=0000-01-01',
      '/api/discrepancies.csv?from=0000-01-01',
      '/api/coverage?from=0000-01-01',
      '/api/coverage?to=0000-01-01',
    ])
      oneLineError(await get(path));
    const page = await get('/?from=0000-01-01', { cookie: alice.cookie });
    expect([page.status, page.headers.get('content-type')]).toEqual([400, 'text/html; charset=utf-8']);
    expect(page.text).toContain('0000-01-01 is not a date');
  });

  it('refuses a NUL in q, assignee and cursor, and numbers past what an id can be', async () => {
    for (const q of [
      'q=a%00b',
      'assignee=%00',
      'cursor=%00',
      'limit=Infinity',
      'limit=1e309',
      `limit=${'9'.repeat(40)}`,
    ])
      oneLineError(await get(`/api/discrepancies?${q}`));
    for (const q of ['before=Infinity', 'before=1e309', `before=${'9'.repeat(40)}`]) {
      oneLineError(await get(`/api/runs?${q}`));
      oneLineError(await get(`/api/loads?${q}`));
    }
    for (const id of ['Infinity', '1e309', '9'.repeat(40)]) {
      oneLineError(await get(`/api/discrepancies/${id}`));
      oneLineError(await post(`/api/discrepancies/${id}/comment`, '{"text":"x"}'));
    }
  });

  it('refuses a NUL or a lone surrogate in a comment, note, assignee or bulk filter', async () => {
    for (const bad of ['\\u0000', '\\ud800', 'a\\udc00b']) {
      oneLineError(await post(`/api/discrepancies/${someId}/comment`, `{"text":"${bad}"}`));
      oneLineError(await post(`/api/discrepancies/${someId}/ack`, `{"note":"${bad}"}`));
      oneLineError(await post(`/api/discrepancies/${someId}/assign`, `{"user":"${bad}"}`));
      oneLineError(await post('/api/discrepancies/bulk', `{"action":"ack","filter":{"q":"${bad}"}}`));
    }
  });

  it('answers the CSV export with a status before its first line, never a 200 that drops', async () => {
    oneLineError(await get('/api/discrepancies.csv?q=%00'));
    const whole = await get('/api/discrepancies.csv');
    expect(whole.status).toBe(200);
    expect(whole.text.split('\r\n').length).toBe(FORMULAS.length + 3);
  });
});

describe('answers carry their headers', () => {
  it('sends nosniff and no-store on JSON, CSV, pages and errors', async () => {
    for (const a of [
      await get('/api/discrepancies'),
      await get('/api/discrepancies.csv'),
      await get('/', { cookie: alice.cookie }),
      await get('/api/discrepancies?from=nope'),
      await get('/api/discrepancies', {}),
    ]) {
      expect(a.headers.get('x-content-type-options')).toBe('nosniff');
      expect(a.headers.get('cache-control')).toBe('no-store');
    }
  });
});

describe('CSV export', () => {
  it('defuses formulas after the normalisation a spreadsheet applies', async () => {
    const csv = (await get('/api/discrepancies.csv')).text;
    const ids = csv
      .split('\r\n')
      .slice(1, -1)
      .map((line) => line.split(',')[10]!.replace(/^"|"$/g, ''));
    for (const f of FORMULAS) expect(ids).toContain(`'${f}`);
    expect(ids).toContain('T-1');
  });
});

describe('redirects after sign-in stay on this site', () => {
  it('keeps a path of this site and turns any other origin into /', async () => {
    const nextOf = async (next: string) => {
      const page = await call(server.base, 'GET', `/sign-in?next=${next}`);
      expect(page.status).toBe(200);
      const value = /data-next="([^"]*)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
      return new URL(value, server.base);
    };
    for (const attack of [
      '/%5C127.0.0.1:1/',
      '/%09/127.0.0.1:1/',
      '//127.0.0.1:1/',
      '/%5C%5Cexample.com',
      'https://example.com/',
    ])
      expect((await nextOf(attack)).origin, attack).toBe(server.base);
    expect((await nextOf('/%5C127.0.0.1:1/')).pathname).toBe('/');
    const kept = await nextOf(encodeURIComponent('/discrepancies/5?x=1'));
    expect(`${kept.pathname}${kept.search}`).toBe('/discrepancies/5?x=1');
  });
});

// ----- the fuzz test, generated from the OpenAPI document -----

const HOSTILE: unknown[] = [
  '',
  ' ',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e309',
  '-1',
  '1.5',
  '9'.repeat(40),
  '0000-01-01',
  '2026-02-30',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00',
  '%E0%A4%A',
  'x'.repeat(5000),
  "'; select pg_sleep(1); --",
  '../../etc/passwd',
  '＝1+1',
  '<script>alert(1)</script>',
];
/** What only a JSON body can carry. */
const HOSTILE_JSON: unknown[] = [null, true, 1e308, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, [], {}, ['\u0000']];

interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  body: Record<string, unknown> | undefined;
}

function operations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(methods)) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      out.push({
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in })),
        body: body?.properties,
      });
    }
  return out;
}

/** A query string value as sent on the wire: encoded, except the one that is malformed on purpose. */
function onTheWire(v: unknown): string {
  if (v === '%E0%A4%A') return v;
  try {
    return encodeURIComponent(String(v));
  } catch {
    // A lone surrogate has no UTF-8: sent as the bytes a careless client would send for it.
    return String(v).replace(/[\ud800-\udfff]/g, '%ED%A0%80');
  }
}

/** Requests that set one parameter of one operation to one hostile value, the rest plausible. */
function* requests(op: Operation): Generator<{ method: string; path: string; body?: string }> {
  const pathFor = (override?: [string, unknown]) =>
    op.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
      override?.[0] === name ? onTheWire(override[1]) : String(someId),
    );
  const plainBody = () => (op.body ? JSON.stringify({}) : undefined);
  for (const p of op.params)
    for (const v of HOSTILE) {
      if (p.in === 'path') yield { method: op.method, path: pathFor([p.name, v]), body: plainBody()! };
      else if (p.in === 'query')
        yield { method: op.method, path: `${pathFor()}?${p.name}=${onTheWire(v)}`, body: plainBody()! };
    }
  const bodyFields: string[][] = Object.entries(op.body ?? {}).flatMap(([name, schema]: [string, any]) =>
    schema.type === 'object' && schema.properties
      ? Object.keys(schema.properties).map((inner) => [name, inner])
      : [[name]],
  );
  for (const field of bodyFields)
    for (const v of [...HOSTILE, ...HOSTILE_JSON]) {
      const [outer = '', inner] = field;
      const body = inner !== undefined ? { [outer]: { [inner]: v } } : { [outer]: v };
      yield { method: op.method, path: pathFor(), body: JSON.stringify(body) };
    }
}

describe('fuzz: every route and parameter of the OpenAPI document', () => {
  it('answers every hostile value below 500, errors in one line, by token and by session', async () => {
    const doc = (await call(server.base, 'GET', '/api/openapi.json')).json;
    const ops = operations(doc).filter((op) => !(op.method === 'DELETE' && op.path === '/api/session'));
    expect(ops.length).toBeGreaterThan(15);
    let sent = 0;
    const failures: string[] = [];
    for (const op of ops) {
      const all = [...requests(op)];
      // A few at a time: real concurrency, without queueing thousands of sockets.
      for (let i = 0; i < all.length; i += 8) {
        await Promise.all(
          all.slice(i, i + 8).map(async (r, j) => {
            const headers = (i + j) % 2 === 0 ? admin : as(alice);
            const a = await call(server.base, r.method, r.path, {
              headers,
              ...(r.body !== undefined ? { rawBody: r.body } : {}),
            });
            sent++;
            const multiLine = a.json && typeof a.json.message === 'string' && /[\r\n]/.test(a.json.message);
            if (a.status >= 500 || multiLine)
              failures.push(
                `${r.method} ${r.path.slice(0, 120)} ${r.body?.slice(0, 80) ?? ''} -> ${a.status} ${a.text.slice(0, 120)}`,
              );
          }),
        );
      }
    }
    // Without credentials, a malformed cookie on every route.
    for (const op of ops) {
      const a = await call(server.base, op.method, op.path.replace(/\{\w+\}/g, '1'), {
        headers: { cookie: 'recon_session=%E0%A4%A; recon_csrf=%ZZ' },
      });
      if (a.status >= 500) failures.push(`${op.method} ${op.path} with a malformed cookie -> ${a.status}`);
    }
    process.stdout.write(`fuzz: ${sent} requests over ${ops.length} operations\n`);
    expect(failures).toEqual([]);
  });
});
