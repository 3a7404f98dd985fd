/* eslint-disable @typescript-eslint/no-explicit-any -- the OpenAPI document is read as plain JSON */
/**
 * Every user sees only their accounts (issue 26, section 3). A user and a token limited to `alpha`
 * read every route of the OpenAPI document (generated: a new route is covered without being listed)
 * and none answers anything of `beta`; `beta`'s discrepancy by id answers 404 as a missing one does,
 * actions on it change nothing, and bulk actions by filter reach only `alpha`.
 */
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, createToken } from '../../workbench/auth/accounts.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLoad } from '../support/recon-rows.ts';
import { as, call, type SignedIn, signIn, useWorkbench } from '../support/workbench-http.ts';

const h = useTestDatabase();
const server = useWorkbench(h);
const PASSWORD = 'correct horse battery';
let ann: SignedIn;
let alphaToken: { authorization: string };
let everyToken: { authorization: string };
let alphaId: number;
let betaId: number;

/**
 * What only beta's rows hold: its transaction ids, its load's file, its only source, its run's note,
 * its money (7,777.77 at stake, in the figures of the overview and totals).
 */
const BETA = /T-BETA|beta-file|legacy-returns|beta-run|"beta"|7,?777\.77|777777|1555554|15,?555\.54/;

async function discrepancy(account: string, id: string, cents = 1000): Promise<number> {
  const row = await sql<{ id: number }>`insert into discrepancies (account, discrepancy_key, kind, rule,
      transaction_id, business_date, currency, expected_amount_cents, actual_amount_cents, difference_cents)
    values (${account}, ${`amount_mismatch:${id}`}, 'amount_mismatch', 'amount', ${id}, current_date - 3,
      'CAD', ${1000 + cents}, 1000, ${-cents}) returning discrepancy_id as id`.execute(h.db);
  return row.rows[0]!.id;
}

async function loadAndRun(account: string, source: 'report-transactions' | 'legacy-returns', note: string) {
  const load = await insertLoad(h.db, source, account);
  await sql`update loads set file_name = ${note}, window_start = now() - interval '3 days',
      window_end = now() - interval '2 days' where load_id = ${load}`.execute(h.db);
  await sql`insert into reconcile_runs (account, range_from, range_to, as_of, settings, summary, finished_at)
    values (${account}, current_date - 4, current_date - 2, now(), '{}', ${JSON.stringify({ note })}, now())`.execute(
    h.db,
  );
}

beforeAll(async () => {
  alphaId = await discrepancy('alpha', 'T-ALPHA-1');
  await discrepancy('alpha', 'T-ALPHA-2');
  betaId = await discrepancy('beta', 'T-BETA-1', 777_777);
  await discrepancy('beta', 'T-BETA-2', 777_777);
  await loadAndRun('alpha', 'report-transactions', 'alpha-file');
  await loadAndRun('beta', 'legacy-returns', 'beta-file beta-run');
  await addUser(h.db, { username: 'ann', role: 'operator', password: PASSWORD, accounts: ['alpha'] });
  alphaToken = {
    authorization: `Bearer ${(await createToken(h.db, { name: 'alpha-robot', role: 'operator', accounts: ['alpha'] })).token}`,
  };
  everyToken = {
    authorization: `Bearer ${(await createToken(h.db, { name: 'every', role: 'viewer' })).token}`,
  };
  const s = await signIn(server.base, 'ann', PASSWORD);
  if (typeof s === 'number') throw new Error(`sign-in answered ${s}`);
  ann = s;
});

/** Every GET of the OpenAPI document that reads data, with ids filled in by `id`. */
async function readPaths(id: number): Promise<string[]> {
  const doc = (await call(server.base, 'GET', '/api/openapi.json')).json;
  return Object.entries<any>(doc.paths)
    .filter(([path, methods]) => methods.get && !['/api/openapi.json', '/health', '/sign-in'].includes(path))
    .map(([path]) => path.replace(/\{\w+\}/g, String(id)));
}

describe('a user or token limited to accounts', () => {
  it('reads nothing of another account on any route of the OpenAPI document', async () => {
    const paths = await readPaths(alphaId);
    expect(paths.length).toBeGreaterThan(8);
    for (const headers of [{ cookie: ann.cookie }, alphaToken]) {
      for (const path of paths) {
        const a = await call(server.base, 'GET', path, { headers });
        expect([path, a.status < 500, BETA.test(a.text)]).toEqual([path, true, false]);
      }
    }
    // The same reads by a token of every account do show beta: the check above can see a leak.
    const every = await Promise.all(paths.map((p) => call(server.base, 'GET', p, { headers: everyToken })));
    expect(every.some((a) => BETA.test(a.text))).toBe(true);
    const worklist = await call(server.base, 'GET', '/api/discrepancies', { headers: alphaToken });
    expect(worklist.json.items.map((d: any) => d.transaction_id).sort()).toEqual(['T-ALPHA-1', 'T-ALPHA-2']);
    expect(worklist.json.totals).toEqual([
      { account: 'alpha', kind: 'amount_mismatch', currency: 'CAD', count: 2, cents: 2000 },
    ]);
    // account= narrows within the scope, never widens it.
    const asked = await call(server.base, 'GET', '/api/discrepancies?account=beta', { headers: alphaToken });
    expect(asked.json.items).toEqual([]);
  });

  it("answers another account's discrepancy by id exactly as a missing one, and changes nothing", async () => {
    const missing = 99_999_999;
    for (const headers of [as(ann), alphaToken]) {
      const beta = await call(server.base, 'GET', `/api/discrepancies/${betaId}`, { headers });
      const none = await call(server.base, 'GET', `/api/discrepancies/${missing}`, { headers });
      expect([beta.status, none.status]).toEqual([404, 404]);
      expect(beta.json.message.replace(String(betaId), 'N')).toBe(
        none.json.message.replace(String(missing), 'N'),
      );
      for (const [action, body] of [
        ['comment', { text: 'hello' }],
        ['ack', { note: 'seen' }],
        ['assign', { user: 'ann' }],
        ['resolve', { reason: 'accepted', note: 'x' }],
      ] as const) {
        const a = await call(server.base, 'POST', `/api/discrepancies/${betaId}/${action}`, {
          headers,
          body,
        });
        expect([action, a.status]).toEqual([action, 404]);
      }
      const page = await call(server.base, 'GET', `/discrepancies/${betaId}`, { headers });
      expect(page.status).toBe(404);
    }
    const events = await sql<{ n: string }>`select count(*)::text as n from discrepancy_events
      where discrepancy_id = ${betaId}`.execute(h.db);
    expect(events.rows[0]!.n).toBe('0');
  });

  it('acts in bulk, by filter or by ids, on its own accounts only', async () => {
    const byFilter = await call(server.base, 'POST', '/api/discrepancies/bulk', {
      headers: as(ann),
      body: { filter: {}, action: 'ack', note: 'morning check' },
    });
    expect([byFilter.status, byFilter.json.count]).toEqual([200, 2]);
    const byIds = await call(server.base, 'POST', '/api/discrepancies/bulk', {
      headers: alphaToken,
      body: { ids: [betaId], action: 'assign', user: 'ann' },
    });
    expect([byIds.status, byIds.json.count]).toEqual([200, 0]);
    const beta = await sql<{ status: string; assignee: string | null }>`select status, assignee
      from discrepancies where account = 'beta' order by discrepancy_id`.execute(h.db);
    expect(beta.rows).toEqual([
      { status: 'open', assignee: null },
      { status: 'open', assignee: null },
    ]);
  });

  it('keeps the metrics of every account from a limited principal', async () => {
    expect((await call(server.base, 'GET', '/metrics', { headers: alphaToken })).status).toBe(403);
    expect((await call(server.base, 'GET', '/metrics', { headers: everyToken })).status).toBe(200);
  });
});
