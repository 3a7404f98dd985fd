/**
 * HTML building blocks of the workbench pages: escaping, money with its currency, times in Eastern,
 * kinds in words, boxes that scroll sideways, and the page frame (skip link, navigation).
 */
import { easternTimeText } from '../../domain/time/eastern-text.ts';
import { formatCents } from '../../reconcile/report/format-money.ts';
import { kindLabel } from '../../reconcile/rules/rules-in-words.ts';
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

/** A form that shows its page again over the dates from and to (ids `<prefix>-from`, `<prefix>-to`). */
export function dateRangeForm(r: {
  readonly action: string;
  readonly id?: string;
  readonly prefix: string;
  readonly labels: readonly [from: string, to: string];
  readonly from: string;
  readonly to: string;
}): Html {
  const field = (name: 'from' | 'to', label: string) =>
    html`<div class="field">
      <label for="${r.prefix}-${name}">${label}</label
      ><input type="date" id="${r.prefix}-${name}" name="${name}" value="${r[name]}" />
    </div>`;
  return html`<form method="get" action="${r.action}" class="filters" ${r.id ? html`id="${r.id}"` : html``}>
    ${field('from', r.labels[0])} ${field('to', r.labels[1])}
    <div class="form-buttons"><button type="submit">Show</button></div>
  </form>`;
}

/** An amount with its currency beside it, never one without the other. */
export function money(cents: number | null | undefined, currency: string | null | undefined): Html {
  if (cents === null || cents === undefined) return html`<span class="muted">—</span>`;
  return html`<span class="money">${formatCents(cents)}&nbsp;${currency ?? '???'}</span>`;
}

/** An instant as every page shows it: Eastern wall clock to the second, labelled; UTC on hover. */
export function when(instant: unknown): Html {
  if (instant === null || instant === undefined || instant === '') return html``;
  const text = String(instant);
  return html`<time datetime="${text}" title="${text} (as stored, UTC)">${easternTimeText(text)}</time>`;
}

/** A discrepancy kind in words, its code name one hover away. */
export function kindText(kind: unknown): Html {
  const code = String(kind);
  return html`<span class="kind" title="${code}">${kindLabel(code)}</span>`;
}

/**
 * Text from outside (a provider's error message, a stored file name) as printable characters: control
 * and other unprintable characters shown as \uXXXX, never sent to the browser raw; long text cut.
 */
export function printable(value: unknown, max = 500): string {
  const text = value === null || value === undefined ? '' : String(value);
  const shown = text.replace(
    /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]/gu,
    (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`,
  );
  return shown.length > max ? `${shown.slice(0, max)}… (${shown.length - max} more characters)` : shown;
}

/**
 * A wide table in a box that scrolls sideways by itself, not the page. The box takes the keyboard
 * focus (so that the arrow keys scroll it) unless what it holds has links of its own to tab to.
 */
export function scrollBox(label: string, table: Html, options: { hasLinks?: boolean } = {}): Html {
  return options.hasLinks
    ? html`<div class="scroll" role="region" aria-label="${label}">${table}</div>`
    : html`<div class="scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}

/** A column of {@link listTable}: its heading, and `num` for a column of numbers (right-aligned). */
export type Column = string | readonly [heading: Html | string, kind: 'num'];

/** A table of rows under column headings (class list), as the pages' lists are. */
export function listTable(id: string, columns: readonly Column[], rows: readonly Html[]): Html {
  const th = (c: Column) =>
    typeof c === 'string'
      ? html`<th scope="col">${c}</th>`
      : html`<th scope="col" class="${c[1]}">${c[0]}</th>`;
  return html`<table class="list" id="${id}">
    <thead>
      <tr>
        ${columns.map(th)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

const NAV: readonly (readonly [string, string, string])[] = [
  ['worklist', '/', 'Worklist'],
  ['overview', '/overview', 'Overview'],
  ['runs', '/runs', 'Runs and loads'],
  ['coverage', '/coverage', 'Coverage'],
  ['scorecard', '/scorecard', 'Scorecard'],
  ['tolerances', '/tolerances', 'Tolerances'],
  ['write-offs', '/write-offs', 'Write-offs'],
];

export function page(
  title: string,
  principal: Principal | null,
  body: Html,
  options: { active?: string; skipTo?: string; skipLabel?: string; refreshSeconds?: number } = {},
): string {
  const nav = principal
    ? html`<nav aria-label="Workbench">
        ${NAV.map(
          ([key, href, label]) =>
            html`<a
              href="${href}"
              ${options.active === key ? html`class="active" aria-current="page"` : html``}
              >${label}</a
            >`,
        )}
        <span class="who">${principal.name} · ${principal.role}</span>
        <button type="button" id="sign-out" class="link">Sign out</button>
      </nav>`
    : html``;
  return `<!doctype html>${
    html`<html lang="en">
      <head>
        <meta charset="utf-8" />
        ${options.refreshSeconds ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}" />` : html``}
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content="${principal?.csrfToken ?? ''}" />
        <title>${title} · ibt-recon workbench</title>
        <link rel="stylesheet" href="/assets/app.css" />
        <script src="/assets/app.js" defer></script>
      </head>
      <body>
        <a class="skip" id="skip-link" href="${options.skipTo ?? '#content'}"
          >${options.skipLabel ?? 'Skip to the content'}</a
        >
        <header><a class="brand" href="/">ibt-recon workbench</a>${nav}</header>
        <main id="content" tabindex="-1">${body}</main>
      </body>
    </html>`.html
  }`;
}
