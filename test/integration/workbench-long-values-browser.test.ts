import type { FastifyInstance } from 'fastify';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser } from '../../workbench/auth/accounts.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';
import { launchChromium, signedInPage } from '../support/browser.ts';

/**
 * Issue 26 section 6: a value longer than any the provider allows (5,000 characters of transaction id,
 * 3,000 of note, written straight into the database as an old import could have) is wrapped or cut on
 * every page, never making the page wider than the screen (it made the worklist 58,500 px wide).
 */

declare const document: { documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number };

const PASSWORD = 'correct horse battery';
const LONG_ID = `T${'7'.repeat(4_999)}`;
const LONG_NOTE = 'n'.repeat(3_000);

let h: DatabaseHandle;
let browser: Browser;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    {
      transaction_id: LONG_ID,
      merchant_transaction_id: `M${'8'.repeat(2_999)}`,
      amount_cents: 12_345,
      transaction_on: '2026-03-02',
      notify_status: null,
      error_message: `E${'9'.repeat(2_999)}`,
    },
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
  const { discrepancy_id } = await h.db
    .updateTable('discrepancies')
    .set({ note: LONG_NOTE })
    .returning('discrepancy_id')
    .executeTakeFirstOrThrow();
  await h.db
    .insertInto('discrepancy_events')
    .values({
      discrepancy_id,
      event: 'acknowledged',
      actor: 'olga',
      details: JSON.stringify({ note: LONG_NOTE }),
    })
    .execute();
  await addUser(h.db, { username: 'olga', role: 'operator', password: PASSWORD });
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

describe('long values in the workbench', () => {
  it('keeps the worklist and the discrepancy page within a 1366 px screen', async () => {
    const { context, page } = await signedInPage(browser, base, { username: 'olga', password: PASSWORD });
    const width = () => page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);

    const link = page.locator('a[href^="/discrepancies/"]').first();
    const href = (await link.getAttribute('href'))!;
    const [worklist, screen] = await width();
    expect(worklist).toBeLessThanOrEqual(screen!);

    await page.goto(`${base}${href}`);
    expect(await page.content()).toContain(LONG_NOTE);
    const [discrepancy] = await width();
    expect(discrepancy).toBeLessThanOrEqual(screen!);

    for (const path of ['/runs', '/coverage', '/overview', '/scorecard', `/?q=${LONG_ID.slice(0, 20)}`]) {
      await page.goto(`${base}${path}`);
      const [scroll] = await width();
      expect(scroll, path).toBeLessThanOrEqual(screen!);
    }
    await context.close();
  });
});
