/**
 * What a browser is shown when a page cannot be answered: the workbench's frame with one sentence
 * that says what happened and what to do, never the JSON API's error body.
 */
import type { Principal } from '../auth/sessions.ts';
import { sameSiteNext } from '../redirects.ts';
import { html, page } from './html.ts';

/** The way back from an error page: by default the worklist. */
export interface WayBack {
  readonly href: string;
  readonly label: string;
}

const TO_THE_WORKLIST: WayBack = { href: '/', label: 'Back to the worklist' };

export function errorPage(
  principal: Principal | null,
  title: string,
  message: string,
  back: WayBack = TO_THE_WORKLIST,
): string {
  return page(
    title,
    principal,
    html`<h1>${title}</h1>
      <p id="error-message" class="error" role="alert">${message}</p>
      <p><a href="${back.href}">${back.label}</a></p>`,
  );
}

/**
 * An address that asks for something its page cannot show (a bad filter, a stale cursor): why, and
 * the way back to the page without the query.
 */
export function cannotShowPage(principal: Principal | null, message: string, url: string): string {
  const href = sameSiteNext(url.split('?')[0]);
  return errorPage(principal, 'Cannot show this page', message, { href, label: `Start again from ${href}` });
}
