/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by exact assertions */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actOnDiscrepancy, bulkAct, InvalidAction } from '../../reconcile/discrepancies/actions.ts';
import { discrepancyDetail } from '../../reconcile/discrepancies/detail.ts';
import {
  listDiscrepancies,
  liveTotals,
  worklistPage,
  worklistTotals,
} from '../../reconcile/discrepancies/read.ts';
import { parseAccountName } from '../../domain/account-name.ts';
import { DiscrepancyNotFound } from '../../reconcile/discrepancies/row.ts';
import { createToken } from '../../workbench/auth/accounts.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { useTestDatabase } from '../support/database.ts';

// One owner for the discrepancy (reconcile/discrepancies/): the terminal and the workbench act by the
// same rules, and the account scope of the filter holds for every read and action.

const h = useTestDatabase();
let app: FastifyInstance;
let base: string;
let operator: string;
const id: Record<string, number> = {};

async function post(path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function acknowledgements(discrepancyId: number) {
  const rows = await sql<{ details: any; actor: string }>`select details, actor from discrepancy_events
    where discrepancy_id = ${discrepancyId} and event = 'acknowledged' order by event_id`.execute(h.db);
  return rows.rows;
}

beforeAll(async () => {
  for (const [account, txn] of [
    ['default', 'T-D1'],
    ['default', 'T-D2'],
    ['acme-2', 'T-A1'],
  ] as const) {
    const row = await sql<{ discrepancy_id: number }>`insert into discrepancies (account, discrepancy_key,
        kind, rule, transaction_id, business_date, currency, expected_amount_cents, actual_amount_cents,
        difference_cents)
      values (${account}, ${`amount_mismatch:${txn}`}, 'amount_mismatch', 'amount', ${txn}, '2026-03-02',
        'CAD', 10500, 10000, -500) returning discrepancy_id`.execute(h.db);
    id[txn] = row.rows[0]!.discrepancy_id;
  }
  operator = (await createToken(h.db, { name: 'robot', role: 'operator' })).token;
  app = await buildWorkbench({ db: h.db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => app?.close());

describe('acknowledgement: one rule for the terminal and the workbench', () => {
  it('the workbench refuses an empty note, as the terminal does, and changes nothing', async () => {
    for (const note of ['', '   ']) {
      const res = await post(`/api/discrepancies/${id['T-D1']}/ack`, { note });
      expect([res.status, res.body.error]).toEqual([400, 'bad_request']);
      expect(res.body.message).toMatch(/needs a non-empty note/);
    }
    const bulk = await post('/api/discrepancies/bulk', { ids: [id['T-D1']], action: 'ack', note: ' ' });
    expect(bulk.status).toBe(400);
    await expect(
      actOnDiscrepancy(h.db, id['T-D1']!, { action: 'ack', note: '' }, { name: 'ana' }),
    ).rejects.toThrow(InvalidAction);
    const row = await h.db
      .selectFrom('discrepancies')
      .select(['status', 'note'])
      .where('discrepancy_id', '=', id['T-D1']!)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'open', note: null });
    expect(await acknowledgements(id['T-D1']!)).toEqual([]);
  });

  it('the workbench keeps the earlier acknowledgement in the events, as the terminal does', async () => {
    await actOnDiscrepancy(
      h.db,
      id['T-D1']!,
      { action: 'ack', note: 'ledger rounding' },
      { name: 'ana', at: '2026-03-20T09:00:00Z' },
    );
    expect((await post(`/api/discrepancies/${id['T-D1']}/ack`, { note: ' booked late ' })).status).toBe(200);
    expect(
      (await post('/api/discrepancies/bulk', { ids: [id['T-D1']], action: 'ack', note: 'month end' })).status,
    ).toBe(200);
    const acks = await acknowledgements(id['T-D1']!);
    expect(
      acks.map((a) => [a.actor, a.details.note, a.details.previous?.by, a.details.previous?.note]),
    ).toEqual([
      ['ana', 'ledger rounding', undefined, undefined],
      ['token:robot', 'booked late', 'ana', 'ledger rounding'],
      ['token:robot', 'month end', 'token:robot', 'booked late'],
    ]);
    expect(acks[1]!.details.previous.at).toEqual(expect.any(String));
    expect(acks[2]!.details.bulk).toBe(true);
  });
});

describe('the account scope of the filter', () => {
  const onlyAcme = { accounts: [parseAccountName('acme-2')] };

  it('limits every read to the scope', async () => {
    const listed = await listDiscrepancies(h.db, onlyAcme, { order: 'newest' });
    expect(listed.map((r) => r.transaction_id)).toEqual(['T-A1']);
    const page = await worklistPage(h.db, { status: 'all', ...onlyAcme }, { limit: 10 });
    expect(page.items.map((r) => r.transaction_id)).toEqual(['T-A1']);
    const totals = await worklistTotals(h.db, { status: 'all', ...onlyAcme });
    expect(totals.map((t) => [t.account, t.count])).toEqual([['acme-2', 1]]);
    expect(await liveTotals(h.db, { status: 'all', ...onlyAcme })).toEqual(totals);
    expect(await listDiscrepancies(h.db, { accounts: [] }, { order: 'newest' })).toEqual([]);
    await expect(discrepancyDetail(h.db, id['T-D2']!, onlyAcme.accounts)).rejects.toThrow(
      DiscrepancyNotFound,
    );
    expect((await discrepancyDetail(h.db, id['T-A1']!, onlyAcme.accounts)).discrepancy.account).toBe(
      'acme-2',
    );
  });

  it('limits every action to the scope: outside it, a discrepancy is not found', async () => {
    await expect(
      actOnDiscrepancy(h.db, id['T-D2']!, { action: 'comment', text: 'x' }, { name: 'ana', ...onlyAcme }),
    ).rejects.toThrow(DiscrepancyNotFound);
    const bulk = await bulkAct(
      h.db,
      { ids: [id['T-D2']!, id['T-A1']!] },
      { action: 'assign', user: null },
      { name: 'ana', ...onlyAcme },
    );
    expect(bulk.count).toBe(1);
    const byFilter = await bulkAct(
      h.db,
      { filter: { status: 'unresolved' } },
      { action: 'ack', note: 'acme only' },
      { name: 'ana', ...onlyAcme },
    );
    expect(byFilter.count).toBe(1);
    const d2 = await h.db
      .selectFrom('discrepancies')
      .select('status')
      .where('discrepancy_id', '=', id['T-D2']!)
      .executeTakeFirstOrThrow();
    expect(d2.status).toBe('open');
  });
});
