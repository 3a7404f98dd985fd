import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { signedInPage } from '../support/browser.ts';
import { seedAmountDifferences } from '../support/amount-differences.ts';
import { PASSWORD, useBrowserWorkbench } from '../support/workbench-fixture.ts';

/**
 * The preview page in real Chromium (issue 29, section 4): an admin proposes CAD tolerances in the
 * form, runs the preview, waits on its page until it is done, reads the counts per kind and currency
 * and the agreement with people's decisions, applies it, and finds the new version on the
 * tolerances page; an operator previews but is offered no Apply button.
 */

const wb = useBrowserWorkbench({ seed: seedAmountDifferences, users: ['ada', 'olga'] });

/** With RECON_SCREENSHOTS=1 (npm run docs:screenshots), the page as docs/screenshots/NAME.png. */
async function shot(page: Page, name: string): Promise<void> {
  if (process.env.RECON_SCREENSHOTS)
    await page.screenshot({
      path: join(import.meta.dirname, `../../docs/screenshots/${name}.png`),
      fullPage: true,
    });
}

/** The counts row of amount_mismatch CAD, change by change. */
async function amountCounts(page: Page) {
  const row = page.locator('#preview-counts tr[data-kind="amount_mismatch"][data-currency="CAD"]');
  const out: Record<string, string> = {};
  for (const change of ['open', 'write_off', 'close', 'agree', 'disagree'])
    out[change] = (await row.locator(`td[data-change="${change}"]`).innerText()).replace(/\s+/g, ' ').trim();
  return out;
}

describe('the preview page in Chromium', () => {
  it('proposes, previews, shows the counts, applies, and the tolerances page shows the new version', async () => {
    const { context, page } = await signedInPage(wb.browser, wb.server.base, {
      username: 'ada',
      password: PASSWORD,
    });
    await page.goto(`${wb.server.base}/tolerances`);
    expect(await page.locator('#account-default h2').innerText()).toContain('version 0');
    await Promise.all([page.waitForURL(/\/tolerances\/preview$/), page.click('#propose')]);

    await page.selectOption('#p0-account', 'default');
    await page.fill('#p0-currency', 'cad');
    await page.fill('#p0-amount_tolerance_cents', '1');
    await page.fill('#p0-write_off_limit_cents', '5');
    await page.fill('#preview-note', 'the bank rounds');
    await Promise.all([
      page.waitForURL(/\/tolerances\/previews\/[0-9a-f-]{36}$/),
      page.click('#run-preview'),
    ]);
    // Running, the page reloads itself until the result is there.
    await page.locator('#preview-counts').waitFor({ timeout: 60_000 });

    expect(await amountCounts(page)).toEqual({
      open: '0',
      write_off: '1 (0.03 CAD)',
      close: '1 (0.01 CAD)',
      agree: '1 (0.09 CAD)',
      disagree: '0',
    });
    expect((await page.locator('#agreement').innerText()).replace(/\s+/g, ' ')).toBe(
      "People's decisions: 1 agree, 0 disagree.",
    );
    expect(await page.locator('#preview-items tbody tr').count()).toBe(3);
    await shot(page, 'tolerances-preview');

    await Promise.all([page.waitForEvent('load'), page.click('#apply')]);
    expect(await page.locator('#applied').innerText()).toMatch(/^Applied by ada at /);
    await Promise.all([page.waitForURL(/\/tolerances$/), page.click('#applied a')]);
    expect(await page.locator('#account-default h2').innerText()).toContain('version 1');
    expect((await page.locator('#current-default tbody tr').innerText()).replace(/\s+/g, ' ').trim()).toBe(
      'CAD 1 ¢ 0 5 ¢',
    );
    await page.click('#account-default summary');
    const history = (await page.locator('#history-default tbody tr').innerText()).replace(/\s+/g, ' ');
    expect(history).toMatch(/^1 CAD 1 ¢ 0 5 ¢ ada .* the bank rounds \d+$/);
    await shot(page, 'tolerances');
    await context.close();
  });

  it('an operator previews but may not apply', async () => {
    const { context, page } = await signedInPage(wb.browser, wb.server.base, {
      username: 'olga',
      password: PASSWORD,
    });
    await page.goto(`${wb.server.base}/tolerances/preview`);
    await page.fill(
      '#settings-file',
      JSON.stringify({ tolerances: [{ currency: 'CAD', amount_tolerance_cents: 9 }] }),
    );
    await Promise.all([page.waitForURL(/\/tolerances\/previews\//), page.click('#run-preview')]);
    await page.locator('#preview-counts, #nothing-changes').first().waitFor({ timeout: 60_000 });
    expect(await page.locator('#apply').count()).toBe(0);
    expect(await page.locator('#apply-needs-admin').count()).toBe(1);
    await context.close();
  });
});
