import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { signedInPage } from '../support/browser.ts';
import {
  discrepancyIdOf,
  PASSWORD,
  seedNearMisses,
  useBrowserWorkbench,
  type UserName,
} from '../support/workbench-fixture.ts';

/**
 * Candidates and manual matches in real Chromium (issue 29): an operator opens a missing item, reads
 * its candidates' checks, ticks one and matches (1:1); ticks two for a split booking (1:N); undoes a
 * match; the discrepancies resolve and reopen on the page.
 */

const wb = useBrowserWorkbench({ seed: seedNearMisses, users: ['olga', 'vic'] });

const idOf = (kind: string, id: string) => discrepancyIdOf(wb.h.db, kind, id);

async function signedIn(username: UserName): Promise<Page> {
  return (
    await signedInPage(
      wb.browser,
      wb.server.base,
      { username, password: PASSWORD },
      { viewport: { width: 1360, height: 900 } },
    )
  ).page;
}

describe('candidates and manual matches in Chromium', () => {
  it('a viewer sees the candidates and their checks in words, and no match form', async () => {
    const page = await signedIn('vic');
    await page.goto(`${wb.server.base}/discrepancies/${await idOf('missing_in_ledger', 'T-1')}`);
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
    await page.goto(`${wb.server.base}/discrepancies/${id}`);
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
    await page.goto(`${wb.server.base}/discrepancies/${id}`);
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
      where item_id = 'T-2'`.execute(wb.h.db);
    const undo = page.locator(`#undo-form-${matchId.rows[0]!.id}`);
    await undo.locator('input[name="note"]').fill('the second part was another payin');
    await Promise.all([page.waitForEvent('load'), undo.locator('button').click()]);
    expect((await page.textContent('#status'))?.trim()).toBe('open');
    const events = await page.locator('#timeline li strong').allInnerTexts();
    expect(events).toEqual(['opened', 'matched', 'resolved', 'match_undone', 'reopened']);
    expect((await page.textContent('#manual-matches'))!.replace(/\s+/g, ' ')).toContain('undone by olga');
    // The ledger part's own page shows the same match, undone, and its candidates again.
    await page.goto(`${wb.server.base}/discrepancies/${await idOf('missing_at_provider', 'M-T-2-a')}`);
    expect(await page.locator('#candidates tbody tr').first().getAttribute('data-candidate')).toBe('T-2');
    await page.context().close();
  });
});
