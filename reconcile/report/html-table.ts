/** HTML text and tables of the self-contained report page (render-html.ts). */

export function esc(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A table cell given as HTML (a link), not as text to escape. */
export interface Html {
  html: string;
}
export type Cell = string | number | Html;

function cellHtml(c: Cell): string {
  return typeof c === 'object' ? c.html : esc(c);
}

export function htmlTable(
  header: string[],
  rows: Cell[][],
  numeric: number[] = [],
  empty = '<p class="none">None.</p>',
  id?: string,
): string {
  if (rows.length === 0) return empty;
  const th = header.map((h, i) => `<th${numeric.includes(i) ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => `<td${numeric.includes(i) ? ' class="num"' : ''}>${cellHtml(c)}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<table${id ? ` id="${id}"` : ''}><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}
