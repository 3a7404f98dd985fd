import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser, createToken } from '../../workbench/auth/accounts.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';
import {
  as,
  call,
  closeAgents,
  serveWorkbench,
  signIn,
  type Served,
  type SignedIn,
} from '../support/workbench-http.ts';

// The candidates and manual matches over the API (issue 29): GET /api/discrepancies/{id}/candidates,
// POST /api/matches, DELETE /api/matches/{id}, GET /api/matches; roles, scope and the OpenAPI document.

const PASSWORD = 'correct horse battery';
let h: DatabaseHandle;
let server: Served;
let op: SignedIn;
let viewer: SignedIn;
let betaToken: string;

async function idOf(kind: string, id: string): Promise<number> {
  const r = await sql<{ id: number }>`select discrepancy_id::int as id from discrepancies where kind = ${kind}
    and (transaction_id = ${id} or merchant_transaction_id = ${id}) and account = 'default'`.execute(h.db);
  return r.rows[0]!.id;
}

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-1', merchant_user_id: 'u1' },
    { transaction_id: 'T-2', amount_cents: 2000, merchant_user_id: 'u2' },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-l', merchant_user_id: 'u1' },
    { merchant_transaction_id: 'M-T-2-a', amount_cents: 1200, merchant_user_id: 'u2' },
    { merchant_transaction_id: 'M-T-2-b', amount_cents: 800, merchant_user_id: 'u2' },
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
  await addUser(h.db, { username: 'olga', role: 'operator', password: PASSWORD });
  await addUser(h.db, { username: 'vic', role: 'viewer', password: PASSWORD });
  betaToken = (await createToken(h.db, { name: 'beta-ops', role: 'operator', accounts: ['beta'] })).token;
  server = await serveWorkbench(h.db);
  op = (await signIn(server.base, 'olga', PASSWORD)) as SignedIn;
  viewer = (await signIn(server.base, 'vic', PASSWORD)) as SignedIn;
});
afterAll(async () => {
  await server?.app.close();
  await closeAgents();
  await h?.close();
});

describe('the matches API', () => {
  it('lists a discrepancy’s candidates with their checks, and documents the routes', async () => {
    const a = await call(
      server.base,
      'GET',
      `/api/discrepancies/${await idOf('missing_in_ledger', 'T-1')}/candidates`,
      {
        headers: as(viewer),
      },
    );
    expect(a.status).toBe(200);
    expect(a.json.candidates[0]).toMatchObject({
      side: 'ledger',
      id: 'M-T-l',
      rank: 1,
      amount_cents: 1000,
      currency: 'CAD',
      business_date: '2026-03-02',
    });
    expect(
      a.json.candidates[0].checks.map((c: { check: string; passed: boolean }) => [c.check, c.passed]),
    ).toEqual([
      ['amount', true],
      ['business_date', true],
      ['merchant_user', true],
      ['id', true],
    ]);
    const doc = (await call(server.base, 'GET', '/api/openapi.json')).json;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/discrepancies/{id}/candidates', '/api/matches', '/api/matches/{id}']),
    );
  });

  it('needs operator to match, a note, and keeps another account’s items out of reach', async () => {
    const body = {
      provider_transaction_ids: ['T-1'],
      ledger_merchant_transaction_ids: ['M-T-l'],
      note: 'typo',
    };
    expect((await call(server.base, 'POST', '/api/matches', { headers: as(viewer), body })).status).toBe(403);
    const noNote = await call(server.base, 'POST', '/api/matches', {
      headers: as(op),
      body: { ...body, note: '' },
    });
    expect(noNote.status).toBe(400);
    const beta = await call(server.base, 'POST', '/api/matches', {
      headers: { authorization: `Bearer ${betaToken}` },
      body: { ...body, account: 'default' },
    });
    expect([beta.status, beta.json.message]).toEqual([400, expect.stringContaining('not one of yours')]);
    const own = await call(server.base, 'POST', '/api/matches', {
      headers: { authorization: `Bearer ${betaToken}` },
      body,
    });
    expect([own.status, own.json.message]).toEqual([400, expect.stringContaining('account beta has no')]);
  });

  it('matches 1:N, resolves the discrepancies at once, lists the match, and undoes it (409 twice)', async () => {
    const made = await call(server.base, 'POST', '/api/matches', {
      headers: as(op),
      body: {
        provider_transaction_ids: ['T-2'],
        ledger_merchant_transaction_ids: ['M-T-2-a', 'M-T-2-b'],
        note: 'one payin booked in two parts',
      },
    });
    expect(made.status).toBe(200);
    expect(made.json).toMatchObject({
      account: 'default',
      currency: 'CAD',
      difference_cents: 0,
      written_off_cents: 0,
    });
    const d = await call(server.base, 'GET', `/api/discrepancies/${await idOf('missing_in_ledger', 'T-2')}`, {
      headers: as(viewer),
    });
    expect(d.json.discrepancy.status).toBe('resolved');
    expect(d.json.events.map((e: { event: string }) => e.event)).toEqual(['opened', 'matched', 'resolved']);
    const list = await call(server.base, 'GET', '/api/matches?active=true', { headers: as(viewer) });
    expect(list.json.matches).toEqual([
      expect.objectContaining({
        match_id: made.json.match_id,
        provider_transaction_ids: ['T-2'],
        ledger_merchant_transaction_ids: ['M-T-2-a', 'M-T-2-b'],
        matched_by: 'olga',
        origin: 'api',
        note: 'one payin booked in two parts',
      }),
    ]);
    const undo = await call(server.base, 'DELETE', `/api/matches/${made.json.match_id}`, {
      headers: as(op),
      body: { note: 'wrong' },
    });
    expect(undo.status).toBe(200);
    const again = await call(server.base, 'DELETE', `/api/matches/${made.json.match_id}`, {
      headers: as(op),
      body: { note: 'wrong' },
    });
    expect(again.status).toBe(409);
    const gone = await call(server.base, 'DELETE', '/api/matches/999999', {
      headers: as(op),
      body: { note: 'x' },
    });
    expect(gone.status).toBe(404);
    const after = await call(
      server.base,
      'GET',
      `/api/discrepancies/${await idOf('missing_in_ledger', 'T-2')}`,
      {
        headers: as(viewer),
      },
    );
    expect(after.json.discrepancy.status).toBe('open');
  });
});
