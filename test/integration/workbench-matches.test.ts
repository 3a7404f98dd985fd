import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { as, call, type Served, type SignedIn } from '../support/workbench-http.ts';
import {
  discrepancyIdOf,
  seedNearMisses,
  sessionOf,
  startWorkbench,
  stopWorkbench,
  tokenHeader,
} from '../support/workbench-fixture.ts';

// The candidates and manual matches over the API (issue 29): GET /api/discrepancies/{id}/candidates,
// POST /api/matches, DELETE /api/matches/{id}, GET /api/matches; roles, scope and the OpenAPI document.

let h: DatabaseHandle;
let server: Served;
let op: SignedIn;
let viewer: SignedIn;
let betaOps: { authorization: string };

const idOf = (kind: string, id: string) => discrepancyIdOf(h.db, kind, id, 'default');

beforeAll(async () => {
  ({ h, server } = await startWorkbench({ seed: seedNearMisses, users: ['olga', 'vic'] }));
  betaOps = await tokenHeader(h.db, { name: 'beta-ops', role: 'operator', accounts: ['beta'] });
  op = await sessionOf(server, 'olga');
  viewer = await sessionOf(server, 'vic');
});
afterAll(() => stopWorkbench({ h, server }));

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
      headers: betaOps,
      body: { ...body, account: 'default' },
    });
    expect([beta.status, beta.json.message]).toEqual([400, expect.stringContaining('not one of yours')]);
    const own = await call(server.base, 'POST', '/api/matches', {
      headers: betaOps,
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
