import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser } from '../../workbench/auth/accounts.ts';
import { buildWorkbench, type WorkbenchOptions } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';
import { launchChromium, signedInPage } from '../support/browser.ts';

/**
 * The workbench in real Chromium (Debian's package, driven by playwright-core; nothing downloads a
 * browser): sign-in, actions, bulk actions, CSV, roles, sessions. Its screenshots stay in the temporary
 * directory; those of docs/screenshots/ are taken by workbench-pages-browser.test.ts.
 */

const SHOTS = join(tmpdir(), 'recon-workbench-screenshots', 'flows');
const PASSWORD = 'correct horse battery';

let h: DatabaseHandle;
let browser: Browser;
const servers: FastifyInstance[] = [];
let base: string;

async function serve(options: Partial<WorkbenchOptions> = {}): Promise<string> {
  const app = await buildWorkbench({ db: h.db, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  servers.push(app);
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

function signedIn(user: string, at = base): Promise<{ context: BrowserContext; page: Page }> {
  return signedInPage(
    browser,
    at,
    { username: user, password: PASSWORD, start: '/' },
    { viewport: { width: 1360, height: 900 }, acceptDownloads: true },
  );
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-1001', amount_cents: 125_000, notify_status: null },
    { transaction_id: 'T-1002', amount_cents: 48_050, notify_status: null },
    { transaction_id: 'T-1003', amount_cents: 2_000, notify_status: null },
    { transaction_id: 'T-1004', amount_cents: 9_999, notify_status: null },
    { transaction_id: 'T-1005', amount_cents: 30_000, currency: 'USD', notify_status: null },
    { transaction_id: 'T-1006', amount_cents: 1_500, notify_status: null, transaction_on: '2026-03-03' },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-1002', transaction_id: 'T-1002', amount_cents: 48_000 },
    { merchant_transaction_id: 'M-T-1003', transaction_id: 'T-1003', amount_cents: 1_000 },
    { merchant_transaction_id: 'M-T-1004', transaction_id: 'T-1004', amount_cents: 9_000 },
    { merchant_transaction_id: 'M-T-1005', transaction_id: 'T-1005', amount_cents: 30_000 },
    { merchant_transaction_id: 'M-T-1006', transaction_id: 'T-1006', amount_cents: 1_000 },
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', now: '2026-03-20T12:00:00Z' });
  // Pulled windows for the coverage calendar: 03-04 failed for transactions and never pulled for returns.
  const pulled = (
    source: 'report-transactions' | 'report-returns',
    day: string,
    status: 'committed' | 'failed',
  ) => ({
    source,
    environment: 'staging',
    origin: 'pull',
    format: 'report-json',
    status,
    window_start: `${day}T05:00:00Z`,
    window_end: `${day.slice(0, 8)}${String(Number(day.slice(8)) + 1).padStart(2, '0')}T05:00:00Z`,
    rows_read: status === 'committed' ? 3 : 0,
    rows_loaded: status === 'committed' ? 3 : 0,
    finished_at: `${day}T06:00:00Z`,
    ...(status === 'failed' ? { error: 'provider answered 503 three times' } : {}),
  });
  await h.db
    .insertInto('loads')
    .values([
      pulled('report-transactions', '2026-03-02', 'committed'),
      pulled('report-returns', '2026-03-02', 'committed'),
      pulled('report-transactions', '2026-03-03', 'committed'),
      pulled('report-returns', '2026-03-03', 'committed'),
      pulled('report-transactions', '2026-03-04', 'failed'),
      pulled('report-transactions', '2026-03-05', 'committed'),
      pulled('report-returns', '2026-03-05', 'committed'),
    ])
    .execute();
  await addUser(h.db, { username: 'alice', role: 'operator', password: PASSWORD });
  await addUser(h.db, { username: 'bob', role: 'operator', password: PASSWORD });
  await addUser(h.db, { username: 'victor', role: 'viewer', password: PASSWORD });
  base = await serve();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  await h?.close();
});

describe('workbench in Chromium', () => {
  it('an operator signs in, filters, opens a discrepancy, acknowledges, assigns, comments, resolves', async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.fill('#username', 'alice');
    await page.fill('#password', PASSWORD);
    await shot(page, 'sign-in');
    await Promise.all([page.waitForURL(`${base}/`), page.click('#sign-in-button')]);
    await expect.poll(() => page.locator('.worklist tbody tr').count()).toBe(6);
    await shot(page, 'worklist');

    await page.click('#filters-toggle');
    await page.selectOption('#f-kind', 'amount_mismatch');
    await Promise.all([page.waitForURL(/kind=amount_mismatch/), page.click('#apply-filters')]);
    const kinds = page.locator('.worklist tbody tr td:nth-child(2) .kind');
    expect(await kinds.allTextContents()).toEqual(Array(4).fill('Amounts differ'));
    expect(await kinds.evaluateAll((spans) => spans.map((s) => s.getAttribute('title')))).toEqual(
      Array(4).fill('amount_mismatch'),
    );
    expect(await page.locator('#totals tbody tr').allTextContents()).toEqual([
      expect.stringMatching(/default\s*Amounts differ\s*CAD\s*4\s*25\.49\s*CAD/),
    ]);

    // The most money at stake first: T-1003 (10.00 CAD).
    await Promise.all([
      page.waitForURL(/\/discrepancies\/\d+$/),
      page.locator('.worklist tbody tr a').first().click(),
    ]);
    expect(await page.locator('#rule').textContent()).toContain('disagree on the amount');
    expect(await page.locator('#diff tr.differs td').allTextContents()).toEqual([
      'amount_cents',
      '20.00\u00a0CAD',
      '10.00\u00a0CAD',
    ]);
    expect(await page.locator('#ev-provider tbody tr').count()).toBe(1);
    expect(await page.locator('#ev-ledger tbody tr').count()).toBe(1);
    await shot(page, 'discrepancy');

    await page.fill('#ack-note', 'checking with the bank');
    await Promise.all([page.waitForEvent('load'), page.click('#ack')]);
    expect(await page.locator('#status').textContent()).toBe('acknowledged');

    await page.selectOption('#assign-user', 'bob');
    await Promise.all([page.waitForEvent('load'), page.click('#assign')]);
    expect(await page.locator('#assignee').textContent()).toBe('bob');

    await page.fill('#comment-text', 'ledger shows 10.00, provider 20.00');
    await Promise.all([page.waitForEvent('load'), page.click('#comment')]);

    await page.selectOption('#resolve-reason', 'fixed_in_ledger');
    await page.fill('#resolve-note', 'booked the 10.00 difference');
    await Promise.all([page.waitForEvent('load'), page.click('#resolve')]);
    expect(await page.locator('#status').textContent()).toBe('resolved (fixed_in_ledger)');
    const timeline = await page.locator('#timeline li').allTextContents();
    expect(
      timeline.map((t) => t.replace(/\s+/g, ' ').trim().split(' ').slice(3).join(' ').split(' — ')[0]),
    ).toEqual([
      'opened by reconcile run 1',
      'acknowledged by alice',
      'assigned by alice',
      'commented by alice',
      'resolved by alice',
    ]);
    expect(timeline[3]).toContain('ledger shows 10.00, provider 20.00');
    await shot(page, 'discrepancy-resolved');
    await context.close();
  });

  it('an operator bulk-acknowledges a selection and exports the filter as CSV', async () => {
    const { context, page } = await signedIn('alice');
    await page.goto(`${base}/?currency=CAD&status=open`);
    const rows = page.locator('.worklist tbody tr');
    const before = await rows.count();
    expect(before).toBeGreaterThanOrEqual(3);
    const ids = await rows.evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.getAttribute('data-id')));
    for (const id of ids) await page.check(`input[name="ids"][value="${id}"]`);
    await page.selectOption('#bulk-action', 'ack');
    await page.fill('#bulk-note', 'month-end batch');
    await Promise.all([page.waitForEvent('load'), page.click('#bulk-submit')]);
    expect(await rows.count()).toBe(before - 2);
    await page.goto(`${base}/?status=acknowledged`);
    const acked = await page
      .locator('.worklist tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
    for (const id of ids) expect(acked).toContain(id);
    await shot(page, 'worklist-acknowledged');

    await page.goto(`${base}/?currency=CAD`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    expect(download.suggestedFilename()).toBe('discrepancies.csv');
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]!.startsWith('discrepancy_id,kind,rule,status,business_date,currency,')).toBe(true);
    expect(csv.slice(1).every((l) => l.split(',')[5] === 'CAD')).toBe(true);
    expect(csv).toHaveLength(
      1 +
        (
          await h.db
            .selectFrom('discrepancies')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('currency', '=', 'CAD')
            .where('resolved_at', 'is', null)
            .executeTakeFirstOrThrow()
        ).n,
    );
    await context.close();
  });

  it('a viewer reads but is refused every action; a POST without the CSRF token is refused', async () => {
    const { context, page } = await signedIn('victor');
    expect(await page.locator('#bulk-form').count()).toBe(0);
    await page.locator('.worklist tbody tr a').first().click();
    await page.waitForURL(/\/discrepancies\/\d+$/);
    expect(await page.locator('#ack-form').count()).toBe(0);
    const id = page.url().split('/').at(-1);
    const token = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const viewerPost = await page.evaluate(
      async ([path, csrf]) => {
        const res = await fetch(path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
          body: JSON.stringify({ note: 'sneaky' }),
        });
        return [res.status, ((await res.json()) as { error: string }).error];
      },
      [`/api/discrepancies/${id}/ack`, token!] as const,
    );
    expect(viewerPost).toEqual([403, 'forbidden']);
    await context.close();

    const op = await signedIn('bob');
    await op.page.goto(`${base}/discrepancies/${id}`);
    const noCsrf = await op.page.evaluate(async (path) => {
      const res = await fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'no token' }),
      });
      return [res.status, ((await res.json()) as { error: string }).error];
    }, `/api/discrepancies/${id}/comment`);
    expect(noCsrf).toEqual([403, 'csrf']);
    const events = await h.db
      .selectFrom('discrepancy_events')
      .select('event')
      .where('discrepancy_id', '=', Number(id))
      .where('actor', 'in', ['victor', 'bob'])
      .execute();
    expect(events).toEqual([]);
    await op.context.close();
  });

  it('a session expires: the next page asks to sign in again', async () => {
    const at = await serve({ sessions: { idleSeconds: 2 } });
    const { context, page } = await signedIn('alice', at);
    expect(await page.locator('.worklist').count()).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 2500));
    await page.goto(`${at}/runs`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await context.close();
  });

  it('shows runs, loads and the coverage calendar', async () => {
    const { context, page } = await signedIn('victor');
    await page.goto(`${base}/runs`);
    expect(await page.locator('#runs tbody tr').count()).toBe(1);
    expect(await page.locator('#loads tbody tr').count()).toBe(8);
    expect(await page.locator('#loads tr.failed').count()).toBe(1);
    expect(await page.locator('#schedule').textContent()).toContain('no Temporal cluster configured');
    await shot(page, 'runs');
    await page.goto(`${base}/coverage?from=2026-02-25&to=2026-03-06`);
    expect(await page.locator('#coverage tbody tr').count()).toBe(10);
    const row = (day: string) =>
      page
        .locator(`#coverage tbody tr:has(th:text-is("${day}")) td`)
        .evaluateAll((tds) => tds.map((td) => td.className));
    expect(await row('2026-03-03')).toEqual(['ok', 'ok', 'ok']);
    expect(await row('2026-03-04')).toEqual(['missing', 'failed', 'missing']);
    expect(await row('2026-03-05')).toEqual(['ok', 'ok', 'missing']);
    expect(await row('2026-03-01')).toEqual(['muted', 'muted', 'muted']);
    await shot(page, 'coverage');
    await context.close();
  });
});
