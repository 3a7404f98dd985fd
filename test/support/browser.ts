/**
 * Chromium for the workbench's browser tests: Debian's `chromium` package (RECON_CHROMIUM names
 * another; playwright-core downloads no browser), and a signed-in page.
 */
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = process.env.RECON_CHROMIUM ?? '/usr/bin/chromium';

/** Launches Chromium; as root without its sandbox, which refuses to run as root (CI containers run as root). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}

/**
 * A new context signed in to the workbench at `base` as `username`, its page on the worklist. The
 * page first opens `start` (default the sign-in page), which must lead to the sign-in form.
 */
export async function signedInPage(
  browser: Browser,
  base: string,
  user: { username: string; password: string; start?: string },
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, ...options });
  const page = await context.newPage();
  await page.goto(`${base}${user.start ?? '/sign-in'}`);
  expect(new URL(page.url()).pathname).toBe('/sign-in');
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await Promise.all([page.waitForURL(`${base}/`), page.click('#sign-in-button')]);
  return { context, page };
}
