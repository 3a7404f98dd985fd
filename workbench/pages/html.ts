/** HTML building blocks of the workbench pages: escaping, money with its currency, the page frame. */
import { formatCents } from '../../reconcile/report/format-money.ts';
import type { Principal } from '../auth/sessions.ts';

/** Text made safe for HTML element content and attribute values. */
export function esc(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A trusted HTML fragment (built by these helpers, already escaped). */
export class Html {
  readonly html: string;
  constructor(html: string) {
    this.html = html;
  }
  toString(): string {
    return this.html;
  }
}

/** Tagged template that escapes every interpolated value except {@link Html} fragments and arrays of them. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.html;
  if (Array.isArray(v)) return v.map(render).join('');
  return esc(v);
}

/** An amount with its currency beside it, never one without the other. */
export function money(cents: number | null | undefined, currency: string | null | undefined): Html {
  if (cents === null || cents === undefined) return html`<span class="muted">—</span>`;
  return html`<span class="money">${formatCents(cents)}&nbsp;${currency ?? '???'}</span>`;
}

export function page(
  title: string,
  principal: Principal | null,
  body: Html,
  options: { active?: string } = {},
): string {
  const nav = principal
    ? html`<nav>
        <a href="/" class="${options.active === 'worklist' ? 'active' : ''}">Worklist</a>
        <a href="/runs" class="${options.active === 'runs' ? 'active' : ''}">Runs and loads</a>
        <a href="/coverage" class="${options.active === 'coverage' ? 'active' : ''}">Coverage</a>
        <a href="/scorecard" class="${options.active === 'scorecard' ? 'active' : ''}">Scorecard</a>
        <span class="who">${principal.name} · ${principal.role}</span>
        <button type="button" id="sign-out" class="link">Sign out</button>
      </nav>`
    : html``;
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content="${principal?.csrfToken ?? ''}" />
        <title>${title} · ibt-recon workbench</title>
        <link rel="stylesheet" href="/assets/app.css" />
        <script src="/assets/app.js" defer></script>
      </head>
      <body>
        <header><a class="brand" href="/">ibt-recon workbench</a>${nav}</header>
        <main>${body}</main>
      </body>
    </html>`.html
  }`;
}
