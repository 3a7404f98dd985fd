import { sql } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { addUser } from '../../workbench/auth/accounts.ts';
import { launchChromium, signedInPage } from '../support/browser.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';
import { closeAgents, serveWorkbench, type Served } from '../support/workbench-http.ts';

/**
 * Candidates and manual matches in real Chromium (issue 29): an operator opens a missing item, reads
 * its candidates' checks, ticks one and matches (1:1); ticks two for a split booking (1:N); undoes a
 * match; the discrepancies resolve and reopen on the page.
 */

const PASSWORD = 'correct horse battery';

let h: DatabaseHandle;
let browser: Browser;
let server: Served;

async function idOf(kind: string, id: string): Promise<number> {
  const r = await sql<{ id: number }>`select discrepancy_id::int as id from discrepancies where kind = ${kind}
    and (transaction_id = ${id} or merchant_transaction_id = ${id})`.execute(h.db);
  return r.rows[0]!.id;
}

async function signedIn(username: string): Promise<Page> {
  return (
    await signedInPage(
      browser,
      server.base,
      { username, password: PASSWORD },
      { viewport: { width: 1360, height: 900 } },
    )
  ).page;
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
  server = await serveWorkbench(h.db);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.app.close();
  await closeAgents();
  await h?.close();
});

describe('candidates and manual matches in Chromium', () => {
  it('a viewer sees the candidates and their checks in words, and no match form', async () => {
    const page = await signedIn('vic');
    await page.goto(`${server.base}/discrepancies/${await idOf('missing_in_ledger', 'T-1')}`);
    const first = page.locator('#candidates tbody tr').first();
    await expect(first.getAttribute('data-candidate')).resolves.toBe('M-T-l');
    const checks = await first.locator('ul.checks li').allInnerTexts();
    expect(checks.map((c) => c.replace(/\s+/g, ' ').trim())).toEqual([
      'passed amount: the same amount',
      'passed business date: the same business day',
      'passed merchant user: the same merchant user',
      'passed id: merchant transaction ids 1 character apart',
    ]);
    expect(await page.locator('#match-form').count()).toBe(0);
    await page.context().close();
  });

  it('an operator chooses a candidate (1:1): the item resolves, the match shows with who and why', async () => {
    const page = await signedIn('olga');
    const id = await idOf('missing_in_ledger', 'T-1');
    await page.goto(`${server.base}/discrepancies/${id}`);
    await page.check('#candidates input.candidate-pick[value="M-T-l"]');
    expect(await page.inputValue('#match-ledger')).toBe('M-T-l');
    await page.fill('#match-note', 'ledger typed l for 1');
    await Promise.all([page.waitForEvent('load'), page.click('#match')]);
    expect((await page.textContent('#status'))?.trim()).toBe('resolved');
    const line = (await page.textContent('#manual-matches'))!.replace(/\s+/g, ' ');
    expect(line).toContain('provider T-1 ↔ ledger M-T-l');
    expect(line).toContain('by olga');
    expect(line).toContain('ledger typed l for 1');
    const events = await page.locator('#timeline li strong').allInnerTexts();
    expect(events).toEqual(['opened', 'matched', 'resolved']);
    await page.context().close();
  });

  it('an operator ticks two candidates for a split booking (1:N), then undoes the match', async () => {
    const page = await signedIn('olga');
    const id = await idOf('missing_in_ledger', 'T-2');
    await page.goto(`${server.base}/discrepancies/${id}`);
    // One part alone is refused, with the reason beside the form.
    await page.check('#candidates input.candidate-pick[value="M-T-2-a"]');
    await page.fill('#match-note', 'one payin booked in two parts');
    await page.click('#match');
    await expect
      .poll(() => page.textContent('#match-form [data-error]'))
      .toContain('the amounts differ by -800 cents CAD');
    await page.check('#candidates input.candidate-pick[value="M-T-2-b"]');
    expect(await page.inputValue('#match-ledger')).toBe('M-T-2-a, M-T-2-b');
    await Promise.all([page.waitForEvent('load'), page.click('#match')]);
    expect((await page.textContent('#status'))?.trim()).toBe('resolved');
    const matchId = await sql<{ id: number }>`select match_id::int as id from manual_match_items
      where item_id = 'T-2'`.execute(h.db);
    const undo = page.locator(`#undo-form-${matchId.rows[0]!.id}`);
    await undo.locator('input[name="note"]').fill('the second part was another payin');
    await Promise.all([page.waitForEvent('load'), undo.locator('button').click()]);
    expect((await page.textContent('#status'))?.trim()).toBe('open');
    const events = await page.locator('#timeline li strong').allInnerTexts();
    expect(events).toEqual(['opened', 'matched', 'resolved', 'match_undone', 'reopened']);
    expect((await page.textContent('#manual-matches'))!.replace(/\s+/g, ' ')).toContain('undone by olga');
    // The ledger part's own page shows the same match, undone, and its candidates again.
    await page.goto(`${server.base}/discrepancies/${await idOf('missing_at_provider', 'M-T-2-a')}`);
    expect(await page.locator('#candidates tbody tr').first().getAttribute('data-candidate')).toBe('T-2');
    await page.context().close();
  });
});
