/**
 * What a browser is shown when a page cannot be answered: the workbench's frame with one sentence
 * that says what happened and what to do, never the JSON API's error body.
 */
import type { Principal } from '../auth/sessions.ts';
import { html, page } from './html.ts';

export function errorPage(principal: Principal | null, title: string, message: string): string {
  return page(
    title,
    principal,
    html`<h1>${title}</h1>
      <p id="error-message">${message}</p>
      <p><a href="/">Back to the worklist</a></p>`,
  );
}
