/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are checked by exact assertions */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_VOLUME_SETTINGS } from '../../config/volume.ts';
import { isBusinessDay } from '../../domain/time/business-days.ts';
import { datesBetween } from '../../domain/time/calendar.ts';
import { checkVolume } from '../../reconcile/volume/check-volume.ts';
import { createToken } from '../../workbench/auth/accounts.ts';
import { useTestDatabase } from '../support/database.ts';
import { loadDailyLegacyRows } from '../support/daily-legacy-rows.ts';
import { type Answer, call, closeAgents, serveWorkbench } from '../support/workbench-http.ts';

/**
 * The workbench shows the low-volume flags on the coverage calendar (page and GET /api/coverage) and
 * serves the provider scorecard (page and GET /api/scorecard), over a real database.
 */
const h = useTestDatabase();
let app: FastifyInstance;
let base: string;
let token: string;
let usOnly: string;

beforeAll(async () => {
  const rows: Record<string, number> = {};
  for (const day of datesBetween('2026-02-02', '2026-03-06')) if (isBusinessDay(day)) rows[day] = 20;
  rows['2026-03-04'] = 1;
  await loadDailyLegacyRows(h, { from: '2026-02-02', to: '2026-03-06' }, rows);
  await checkVolume(
    h.db,
    { account: 'default', from: '2026-03-02', to: '2026-03-06' },
    { settings: DEFAULT_VOLUME_SETTINGS },
  );
  ({ app, base } = await serveWorkbench(h.db));
  token = (await createToken(h.db, { name: 'viewer', role: 'viewer' })).token;
  usOnly = (await createToken(h.db, { name: 'us-viewer', role: 'viewer', accounts: ['us-main'] })).token;
});
afterAll(async () => {
  await app?.close();
  await closeAgents();
});

/** GET as the full viewer (true), as the holder of another token (its text), or with no credentials. */
function get(path: string, auth: boolean | string = true): Promise<Answer> {
  const bearer = auth === true ? token : auth;
  return call(base, 'GET', path, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});
}

describe('low-volume days on the coverage calendar', () => {
  it('GET /api/coverage gives each flagged day its source, account, rows and usual figure', async () => {
    const r = await get('/api/coverage?from=2026-03-03&to=2026-03-05');
    expect(r.status).toBe(200);
    expect(r.json.days.map((d: any) => [d.date, d.low_volume])).toEqual([
      ['2026-03-03', []],
      [
        '2026-03-04',
        [{ account: 'default', source: 'legacy-transactions', rows: 1, usual_rows: 20, baseline_days: 20 }],
      ],
      ['2026-03-05', []],
    ]);
  });

  it('the coverage page marks the cell with the figure it was compared to', async () => {
    const r = await get('/coverage?from=2026-03-03&to=2026-03-05');
    expect(r.status).toBe(200);
    expect(r.text).toContain('class="low-volume"');
    expect(r.text).toContain('low: 1 rows, usually 20 (default)');
  });
});

describe('the provider scorecard in the workbench', () => {
  it('GET /api/scorecard lists the view per account, source and day, and refuses a bad range', async () => {
    const r = await get('/api/scorecard?from=2026-03-04&to=2026-03-04&account=default');
    expect(r.status).toBe(200);
    expect(r.json.items).toMatchObject([
      {
        account: 'default',
        source: 'legacy-transactions',
        business_date: '2026-03-04',
        rows: 1,
        sibling_source: 'report-transactions',
        rows_not_in_sibling: 1,
      },
    ]);
    expect(r.json.items[0].first_load_id).toEqual(expect.any(Number));
    expect(r.json.items[0].arrival_delay_seconds).toBeGreaterThan(0);
    expect((await get('/api/scorecard?from=2026-03-05&to=2026-03-04')).status).toBe(400);
    expect((await get('/api/scorecard?account=Not%20An%20Account')).status).toBe(400);
    expect((await get('/api/scorecard', false)).status).toBe(401);
  });

  it('the scorecard page shows the same rows', async () => {
    const r = await get('/scorecard?from=2026-03-04&to=2026-03-04');
    expect(r.status).toBe(200);
    expect(r.text).toContain('id="scorecard"');
    expect(r.text).toMatch(/<td>legacy-transactions<\/td>\s*<td class="num">1<\/td>/);
  });
});

describe('a caller limited to other accounts', () => {
  it("sees neither this account's low-volume flags nor its scorecard rows", async () => {
    const cov = await get('/api/coverage?from=2026-03-04&to=2026-03-04', usOnly);
    expect(cov.status).toBe(200);
    expect(cov.json.days[0].low_volume).toEqual([]);
    const card = await get('/api/scorecard?from=2026-03-04&to=2026-03-04', usOnly);
    expect(card.json.items).toEqual([]);
    const asked = await get('/api/scorecard?from=2026-03-04&to=2026-03-04&account=default', usOnly);
    expect(asked.json.items).toEqual([]);
    expect((await get('/scorecard?from=2026-03-04&to=2026-03-04', usOnly)).text).not.toContain(
      '<td>legacy-transactions</td>',
    );
  });
});
