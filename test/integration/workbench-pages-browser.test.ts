import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser } from '../../workbench/auth/accounts.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions, type TxnInput } from '../support/recon-rows.ts';
import { launchChromium, signedInPage } from '../support/browser.ts';

/**
 * The workbench's pages in real Chromium (Debian's package, driven by playwright-core; nothing
 * downloads a browser): the first screen, paging, filter errors, the overview's charts, narrow
 * screens and axe-core's accessibility check. With RECON_SCREENSHOTS=1 (npm run docs:screenshots)
 * the screenshots go to docs/screenshots/.
 */

// Run inside the page by page.evaluate (the project compiles without the DOM library).
interface PageElement {
  id: string;
  open: boolean;
  outerHTML: string;
  classList: { contains(name: string): boolean };
  getAttribute(name: string): string | null;
  closest(selector: string): PageElement | null;
  getBoundingClientRect(): { right: number };
  getClientRects(): { length: number };
}
interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[] }[];
}
declare const document: {
  activeElement: PageElement | null;
  documentElement: { clientWidth: number; scrollWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement> & { forEach(f: (e: PageElement) => void): void };
};
declare const window: { axe: { run(): Promise<{ violations: AxeViolation[] }> } };

const SHOTS = process.env.RECON_SCREENSHOTS
  ? join(import.meta.dirname, '../../docs/screenshots')
  : join(tmpdir(), 'recon-workbench-screenshots');
const PASSWORD = 'correct horse battery';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let h: DatabaseHandle;
let browser: Browser;
let app: FastifyInstance;
let base: string;

/** 60 CAD and 4 USD transactions the ledger lacks, 20 matched CAD ones, over March 2..13. */
async function seed(): Promise<void> {
  const load = await insertLoad(h.db, 'report-transactions');
  const day = (i: number) => addDays('2026-03-02', i % 10);
  const missing: TxnInput[] = [
    ...Array.from({ length: 60 }, (_, i) => ({
      transaction_id: `C-${1000 + i}`,
      amount_cents: 10_000 + i * 137,
      transaction_on: day(i),
      notify_status: null,
    })),
    ...Array.from({ length: 4 }, (_, i) => ({
      transaction_id: `U-${2000 + i}`,
      amount_cents: 500 + i * 250,
      currency: 'USD',
      transaction_on: day(i),
      notify_status: null,
    })),
  ];
  const matched = Array.from({ length: 20 }, (_, i) => ({
    transaction_id: `OK-${3000 + i}`,
    amount_cents: 4_000,
    transaction_on: day(i),
    notify_status: null,
  }));
  await insertTransactions(h.db, load, [...missing, ...matched]);
  await insertLedger(
    h.db,
    matched.map((t) => ({
      merchant_transaction_id: `M-${t.transaction_id}`,
      transaction_id: t.transaction_id,
      amount_cents: 4_000,
    })),
  );
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-13', now: '2026-03-20T12:00:00Z' });
  await h.db
    .insertInto('loads')
    .values([
      {
        source: 'report-transactions',
        environment: 'staging',
        origin: 'pull',
        format: 'report-json',
        status: 'committed',
        window_start: '2026-03-12T04:00:00Z',
        window_end: '2026-03-13T04:00:00Z',
        rows_read: 3,
        rows_loaded: 3,
        finished_at: '2026-03-13T06:00:00Z',
      },
      {
        source: 'report-transactions',
        environment: 'staging',
        origin: 'pull',
        format: 'report-json',
        status: 'failed',
        window_start: '2026-03-13T04:00:00Z',
        window_end: '2026-03-14T04:00:00Z',
        rows_read: 0,
        rows_loaded: 0,
        finished_at: '2026-03-14T06:00:00Z',
        error: 'provider said \u001b[31mno\u0007 such\u200b window',
      },
    ])
    .execute();
  await addUser(h.db, { username: 'olga', role: 'operator', password: PASSWORD });
}

function signedIn(
  viewport = { width: 1366, height: 900 },
  options: { bypassCSP?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  return signedInPage(browser, base, { username: 'olga', password: PASSWORD }, { viewport, ...options });
}

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

const stakesOf = (page: Page, currency: string) =>
  page
    .locator(`#worklist-${currency} tbody tr td:nth-child(3)`)
    .evaluateAll((tds) => tds.map((td) => Number(td.textContent!.replace(/[^0-9]/g, ''))));

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  h = await createTestDatabase();
  await seed();
  app = await buildWorkbench({ db: h.db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await h?.close();
});

describe('workbench pages in Chromium', () => {
  it('shows the work of every currency on the first screen at 1366x900, biggest first in each', async () => {
    const { context, page } = await signedIn();
    for (const currency of ['CAD', 'USD']) {
      const first = page.locator(`#worklist-${currency} tbody tr`).first();
      const box = (await first.boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(900);
      const stakes = await stakesOf(page, currency);
      expect(stakes.length).toBeGreaterThan(0);
      expect(stakes).toEqual([...stakes].sort((a, b) => b - a));
    }
    expect((await stakesOf(page, 'CAD'))[0]).toBe(10_000 + 59 * 137);
    expect(await page.locator('#summary').textContent()).toMatch(/CAD\s+60\s+items.*USD\s+4\s+items/s);
    expect(await page.locator('#totals').isVisible()).toBe(false);
    expect(await page.locator('#worklist-CAD .kind').first().getAttribute('title')).toBe('missing_in_ledger');
    expect(await page.locator('#worklist-CAD .kind').first().textContent()).toBe('Not in the ledger');
    await shot(page, 'worklist', false);

    // The skip link, then the first item: three key presses from the top of the page.
    await page.goto(`${base}/`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('skip-link');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toMatch(
      /^\/discrepancies\/\d+$/,
    );
    await context.close();
  });

  it('pages both ways and says where it is', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${base}/?currency=cad`);
    const position = () => page.locator('#cur-CAD .position').textContent();
    expect(await position()).toMatch(/1–50 of 60 CAD/);
    expect(await page.locator('#prev-page-CAD').count()).toBe(0);
    const firstIds = await page
      .locator('#worklist-CAD tbody tr')
      .evaluateAll((trs) => trs.map((t) => t.dataset.id));
    await Promise.all([page.waitForURL(/after=/), page.click('#next-page-CAD')]);
    expect(await position()).toMatch(/51–60 of 60 CAD/);
    expect(await page.locator('#next-page-CAD').count()).toBe(0);
    await shot(page, 'worklist-page-2', false);
    await Promise.all([page.waitForURL(/before=/), page.click('#prev-page-CAD')]);
    expect(await position()).toMatch(/1–50 of 60 CAD/);
    expect(
      await page.locator('#worklist-CAD tbody tr').evaluateAll((trs) => trs.map((t) => t.dataset.id)),
    ).toEqual(firstIds);
    await context.close();
  });

  it('takes amounts in dollars and any-case currencies; shows a wrong value beside its field', async () => {
    const { context, page } = await signedIn();
    await page.click('#filters-toggle');
    await page.fill('#f-currency', 'usd');
    await page.fill('#f-min', '10');
    await Promise.all([page.waitForURL(/min=10/), page.click('#apply-filters')]);
    expect(await stakesOf(page, 'USD')).toEqual([1250, 1000]);
    await page.fill('#f-min', '10.00');
    await Promise.all([page.waitForURL(/min=10\.00/), page.click('#apply-filters')]);
    expect(await stakesOf(page, 'USD')).toEqual([1250, 1000]);

    await page.fill('#f-min', 'ten dollars');
    await page.fill('#f-currency', 'US');
    const [response] = await Promise.all([page.waitForEvent('response'), page.click('#apply-filters')]);
    expect(response.status()).toBe(400);
    expect(response.headers()['content-type']).toMatch(/^text\/html/);
    expect(await page.locator('#err-min').textContent()).toContain('dollars and cents, such as 10 or 10.00');
    expect(await page.locator('#err-currency').textContent()).toContain('3-letter currency code');
    expect(await page.locator('#f-min').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#f-min').inputValue()).toBe('ten dollars');
    await shot(page, 'worklist-filter-error', false);

    // A stale link, an unknown discrepancy and an address with no page are pages too; the JSON API
    // keeps JSON errors.
    for (const path of ['/?currency=CAD&after=not-a-cursor', '/discrepancies/99999', '/no-such-page']) {
      const res = await page.goto(`${base}${path}`);
      expect(res!.headers()['content-type']).toMatch(/^text\/html/);
      expect(res!.status()).toBe(path.startsWith('/?') ? 400 : 404);
      expect(await page.locator('#error-message').count()).toBe(1);
    }
    const api = await page.evaluate(async () => {
      const res = await fetch('/api/discrepancies?min_cents=ten');
      return [res.status, res.headers.get('content-type')];
    });
    expect(api[0]).toBe(400);
    expect(api[1]).toMatch(/^application\/json/);
    const missingApi = await page.evaluate(async () => {
      const res = await fetch('/api/no-such-route', { headers: { accept: 'text/html' } });
      return [res.status, res.headers.get('content-type')];
    });
    expect(missingApi).toEqual([404, expect.stringMatching(/^application\/json/)]);
    await context.close();
  });

  it('draws the overview: open money per day and currency, new against resolved, matched share, ages', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${base}/overview`);
    expect(await page.locator('#o-to').inputValue()).toBe('2026-03-11');
    expect(await page.locator('#open-money-CAD svg rect.bar').count()).toBe(10);
    expect(await page.locator('#open-money-USD svg rect.bar').count()).toBe(4);
    const cad = await page.locator('#open-money-CAD svg rect.bar title').allTextContents();
    expect(cad[0]).toMatch(/^2026-03-02: [\d,]+\.\d\d CAD$/);
    expect(await page.locator('#new-resolved svg rect.bar.s0 title').allTextContents()).toEqual([
      '2026-03-20 new: 64',
    ]);
    // 84 transactions, 64 with an open discrepancy: 20 matched.
    expect(await page.locator('#matched-share').textContent()).toMatch(/23\.8 %\s+of 84 provider/);
    expect(await page.locator('#ages svg rect.bar').count()).toBeGreaterThan(0);
    expect(await page.locator('svg[role="img"]').count()).toBe(5);
    await shot(page, 'overview');
    await context.close();
  });

  it('shows the resolution note after a resolution, and runs, loads and coverage as people read them', async () => {
    const { context, page } = await signedIn();
    await page.locator('#worklist-USD tbody tr a').first().click();
    await page.waitForURL(/\/discrepancies\/\d+$/);
    await shot(page, 'discrepancy');
    await page.fill('#ack-note', 'asking the bank');
    await Promise.all([page.waitForEvent('load'), page.click('#ack')]);
    expect(await page.locator('#note').textContent()).toContain('asking the bank');
    await page.selectOption('#resolve-reason', 'accepted');
    await page.fill('#resolve-note', 'bank confirmed the transfer');
    await Promise.all([page.waitForEvent('load'), page.click('#resolve')]);
    expect(await page.locator('#note').textContent()).toMatch(
      /bank confirmed the transfer\s*\(resolved by olga\)/,
    );
    expect(await page.locator('h1 .kind').textContent()).toBe('Not in the ledger');
    await shot(page, 'discrepancy-resolved');

    await page.goto(`${base}/runs`);
    const run = await page.locator('#runs tbody tr').first().textContent();
    expect(run).toContain('default');
    expect(run).toContain('64 newly found');
    expect(run).toContain('2026-03-20 08:00:00 EDT');
    const error = (await page.locator('#loads .provider-error').textContent())!;
    expect(error).toBe('provider said \\u001b[31mno\\u0007 such\\u200b window');
    await shot(page, 'runs');

    await page.goto(`${base}/coverage`);
    expect(await page.locator('h1').textContent()).toBe('Coverage 2026-02-07 to 2026-03-13');
    await shot(page, 'coverage');
    await context.close();
  });

  it('fits a 400-pixel screen on every page: no sideways scrolling, every control on screen', async () => {
    const { context, page } = await signedIn({ width: 400, height: 800 });
    const id = await page.locator('#worklist-CAD tbody tr').first().getAttribute('data-id');
    for (const path of [
      '/',
      '/?currency=CAD',
      `/discrepancies/${id}`,
      '/overview',
      '/runs',
      '/coverage',
      '/scorecard',
      '/tolerances',
      '/tolerances/preview',
      '/write-offs?month=2026-03',
    ]) {
      await page.goto(`${base}${path}`);
      await page.evaluate(() =>
        document.querySelectorAll('details').forEach((d: { open: boolean }) => (d.open = true)),
      );
      const fit = await page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const outside = [...document.querySelectorAll('a, button, input, select, summary, [tabindex]')]
          .filter((el) => !el.closest('.scroll') && el.getClientRects().length > 0)
          .filter((el) => el.getBoundingClientRect().right > width + 1 && !el.classList.contains('skip'))
          .map((el) => el.outerHTML.slice(0, 80));
        // Anything in the page (outside a box that scrolls by itself) that reaches past the screen.
        const wide = [...document.querySelectorAll('body *')]
          .filter((el) => !el.closest('.scroll') && el.getBoundingClientRect().right > width + 1)
          .filter((el) => !el.classList.contains('skip'))
          .map((el) => el.outerHTML.slice(0, 100));
        return { scrollWidth: document.documentElement.scrollWidth, width, outside, wide };
      });
      expect({ path, ...fit }).toEqual({
        path,
        scrollWidth: fit.width,
        width: fit.width,
        outside: [],
        wide: [],
      });
      if (path === '/' || path === '/overview')
        await shot(page, `narrow${path === '/' ? '-worklist' : '-overview'}`);
    }
    await context.close();
  });

  it('finds no serious or critical accessibility violation on any page (axe-core)', async () => {
    // axe is injected as an inline script, which the pages' Content-Security-Policy refuses: bypassed here only.
    const { context, page } = await signedIn(undefined, { bypassCSP: true });
    const id = await page.locator('#worklist-CAD tbody tr').first().getAttribute('data-id');
    const anonymous = await browser.newPage({ bypassCSP: true });
    const pages: [Page, string][] = [
      [anonymous, '/sign-in'],
      [page, '/'],
      [page, '/?currency=CAD'],
      [page, '/?min=ten'],
      [page, `/discrepancies/${id}`],
      [page, '/overview'],
      [page, '/runs'],
      [page, '/coverage'],
      [page, '/scorecard'],
      [page, '/tolerances'],
      [page, '/tolerances/preview'],
      [page, '/write-offs?month=2026-03'],
    ];
    for (const [p, path] of pages) {
      await p.goto(`${base}${path}`);
      await p.addScriptTag({ content: AXE });
      const violations = await p.evaluate(async () => {
        const result = await window.axe.run();
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
      });
      expect({ path, violations }).toEqual({ path, violations: [] });
    }
    await shot(anonymous, 'sign-in');
    await anonymous.close();
    await context.close();
  });
});
