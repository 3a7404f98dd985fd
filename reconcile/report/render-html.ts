import { daysInclusive } from '../../domain/time/calendar.ts';
import { explainKind } from '../rules/rules-in-words.ts';
import { currencyLabel, formatCents, formatMoney } from './format-money.ts';
import { byStakeThenAge, type DiscrepancyRow, type ReportData } from './report-data.ts';

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#393b79',
  '#637939',
  '#8c6d31',
  '#843c39',
];

function esc(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface Series {
  name: string;
  color: string;
  values: number[];
  /** Said in the legend after the name, when the name alone is not enough. */
  note?: string;
}

/**
 * The vertical scale of a bar chart whose bar totals are `totals`. A few outlier bars must not flatten
 * the others: a bar more than OUTLIER_FACTOR times the 75th percentile of the non-zero bars (at least
 * three of them) is an outlier; the axis then stops at the highest normal bar and outliers are drawn
 * cut at the top, marked, with their true value written above them.
 */
export function chartScale(totals: readonly number[]): { top: number; outliers: Set<number> } {
  const nonZero = totals.filter((v) => v > 0).sort((a, b) => a - b);
  const outliers = new Set<number>();
  if (nonZero.length >= 3) {
    const p75 = nonZero[Math.ceil(0.75 * nonZero.length) - 1]!;
    totals.forEach((v, i) => {
      if (v > OUTLIER_FACTOR * p75) outliers.add(i);
    });
  }
  const top = Math.max(1, ...totals.filter((_, i) => !outliers.has(i)));
  return { top, outliers };
}

/** A bar above this many times the 75th percentile of the chart's non-zero bars is an outlier. */
export const OUTLIER_FACTOR = 3;

/**
 * A stacked vertical bar chart as inline SVG, with axis labels and a legend. Each bar is a
 * `<g class="bar" data-category>`; an outlier bar (see {@link chartScale}) has the class `outlier`.
 */
function barChart(
  title: string,
  categories: string[],
  series: Series[],
  format: (v: number) => string,
  options: { outliers?: boolean } = {},
): string {
  const width = 860;
  const height = 320;
  const left = 90;
  const bottom = 60;
  const top = 40;
  const plotH = height - top - bottom;
  const plotW = width - left - 20;
  const totals = categories.map((_, i) => series.reduce((n, s) => n + (s.values[i] ?? 0), 0));
  const scale =
    options.outliers === false
      ? { top: Math.max(1, ...totals), outliers: new Set<number>() }
      : chartScale(totals);
  // Gridlines at round values (1, 2 or 5 times a power of ten), so that every label is exact.
  const raw = scale.top / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const tick = Math.max(1, [1, 2, 5, 10].map((m) => m * magnitude).find((v) => v >= raw) ?? raw);
  const max = tick * 4;
  const step = plotW / Math.max(1, categories.length);
  const barW = Math.min(48, Math.max(2, step * 0.7));
  const parts: string[] = [];
  for (let t = 0; t <= 4; t++) {
    const v = tick * t;
    const y = top + plotH - (plotH * t) / 4;
    parts.push(`<line x1="${left}" x2="${width - 20}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="11">${esc(format(Math.round(v)))}</text>`,
    );
  }
  const labelEvery = Math.ceil(categories.length / 16);
  categories.forEach((cat, i) => {
    const outlier = scale.outliers.has(i);
    const x = left + i * step + (step - barW) / 2;
    const cx = (x + barW / 2).toFixed(1);
    const bar: string[] = [];
    let used = 0; // the height drawn so far; an outlier's segments stop at the top of the plot
    for (const s of series) {
      const v = s.values[i] ?? 0;
      if (v <= 0) continue;
      const h = Math.min((plotH * v) / max, plotH - used);
      if (h <= 0) break;
      used += h;
      bar.push(
        `<rect x="${x.toFixed(1)}" y="${(top + plotH - used).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${s.color}"><title>${esc(cat)} ${esc(s.name)}: ${esc(format(v))}</title></rect>`,
      );
    }
    if (outlier) {
      // A white break across the cut bar, a red outline and the true total above it.
      const yb = top + 10;
      bar.push(
        `<rect x="${x.toFixed(1)}" y="${top}" width="${barW.toFixed(1)}" height="${plotH}" fill="none" stroke="#c0392b" stroke-width="1.5"/>`,
        `<path d="M${(x - 2).toFixed(1)} ${yb + 4} L${cx} ${yb - 2} L${(x + barW + 2).toFixed(1)} ${yb + 4}" stroke="#fff" stroke-width="4" fill="none"/>`,
        `<text class="outlier-value" x="${cx}" y="${top - 6}" text-anchor="middle" font-size="10" font-weight="600" fill="#c0392b">▲ ${esc(format(totals[i]!))}</text>`,
      );
    }
    parts.push(
      `<g class="bar${outlier ? ' outlier' : ''}" data-category="${esc(cat)}" data-total="${totals[i]}"><title>${esc(cat)}: ${esc(format(totals[i]!))}${outlier ? ' (outlier, beyond the scale)' : ''}</title>${bar.join('')}</g>`,
    );
    if (i % labelEvery === 0) {
      parts.push(
        `<text x="${cx}" y="${top + plotH + 14}" text-anchor="end" font-size="10" transform="rotate(-35 ${cx} ${top + plotH + 14})">${esc(cat)}</text>`,
      );
    }
  });
  const legend = series
    .map(
      (s) =>
        `<span class="key"><span class="swatch" style="background:${s.color}"></span>${esc(s.name)}${s.note ? `<span class="key-note">: ${esc(s.note)}</span>` : ''}</span>`,
    )
    .join(' ');
  const outlierNote = scale.outliers.size
    ? `<p class="outlier-note">▲ ${scale.outliers.size === 1 ? '1 bar is an outlier' : `${scale.outliers.size} bars are outliers`} (more than ${OUTLIER_FACTOR} times the 75th percentile of the bars): the scale stops at the highest normal bar, outliers are cut at the top, outlined in red, and their true total is written above them (${esc(
        [...scale.outliers].map((i) => `${categories[i]}: ${format(totals[i]!)}`).join('; '),
      )}).</p>`
    : '';
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${esc(title)}">${parts.join('')}</svg><div class="legend">${legend}</div>${outlierNote}</figure>`;
}

/** A table cell given as HTML (a link), not as text to escape. */
interface Html {
  html: string;
}
type Cell = string | number | Html;

function cellHtml(c: Cell): string {
  return typeof c === 'object' ? c.html : esc(c);
}

function htmlTable(
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

/** A kind as words: missing_in_ledger → "Missing in ledger". */
function kindName(kind: string): string {
  const words = kind.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A transaction type of the volume charts as people say it; null is a code neither DEBIT nor CREDIT. */
function typeName(type: string | null): string {
  return type === 'DEBIT'
    ? 'Payins (DEBIT)'
    : type === 'CREDIT'
      ? 'Payouts (CREDIT)'
      : type === null
        ? 'Unknown type'
        : type;
}

export interface HtmlReportOptions {
  /** When the page was made (ISO); ages are counted to its date. Default: now. */
  generatedAt?: string;
  /** At most this many lines per currency in the list of open problems (default 500). */
  detailLimit?: number;
  /** The workbench's address (recon serve), e.g. https://recon.example.com: ids become links to it. */
  workbenchUrl?: string;
}

/**
 * A self-contained HTML page (no external resources), action first: what needs attention by kind and
 * currency with what to do, the largest and oldest open items with their ids, the open problems, and
 * only then the volumes and charts.
 */
export function renderHtmlReport(d: ReportData, options: HtmlReportOptions = {}): string {
  const generatedAt = options.generatedAt ?? new Date().toISOString();
  const base = options.workbenchUrl?.replace(/\/+$/, '');
  const count = (n: number) => n.toLocaleString('en-CA');
  const c = d.coverage;
  const days = [...new Set([...d.volumes.map((v) => v.day), ...d.byDay.map((v) => v.day)])].sort();

  const worklistLink = (params: Record<string, string>, text: string): string =>
    base
      ? `<a href="${esc(`${base}/?${new URLSearchParams({ from: d.from, to: d.to, ...params })}`)}">${esc(text)}</a>`
      : '';
  const idCell = (r: DiscrepancyRow): Html => ({
    html: base
      ? `<a href="${esc(`${base}/discrepancies/${r.discrepancy_id}`)}">#${r.discrepancy_id}</a>`
      : `#${r.discrepancy_id}`,
  });
  const ageDays = (r: DiscrepancyRow) =>
    Math.max(0, daysInclusive(r.business_date ?? generatedAt.slice(0, 10), generatedAt.slice(0, 10)) - 1);
  const seeAll = (currency?: string) =>
    `To see all: ${base ? `${worklistLink(currency ? { currency } : {}, 'the workbench')}, ` : 'the workbench (recon serve), '}<code>recon discrepancies list --from ${esc(d.from)} --to ${esc(d.to)}${currency ? ` --currency ${esc(currency)}` : ''}</code>, or <code>recon report --from ${esc(d.from)} --to ${esc(d.to)} --csv FILE</code>.`;

  const noProblems =
    c.checkedDays === c.days
      ? '<p class="none">None.</p>'
      : c.checkedDays === 0
        ? '<p class="unchecked">Not checked: no reconcile run covers this range.</p>'
        : `<p class="unchecked">None on the ${count(c.checkedDays)} checked dates; ${count(c.days - c.checkedDays)} dates not checked.</p>`;
  const coverage =
    c.checkedDays === c.days
      ? `<p class="covered">Every date of the range (${count(c.days)}) was checked by a reconcile run; the latest committed ${esc(c.lastRunAt)}.</p>`
      : c.checkedDays === 0
        ? `<p class="unchecked"><strong>Not checked:</strong> no reconcile run covers any date of ${esc(d.from)} to ${esc(d.to)}. Nothing on this page has been matched; the problem counts below are not zero, they are unknown. Run <code>recon reconcile --from ${esc(d.from)} --to ${esc(d.to)}</code> first.</p>`
        : `<p class="unchecked"><strong>Incomplete:</strong> ${count(c.days - c.checkedDays)} of ${count(c.days)} dates were never checked by a reconcile run: ${esc(c.unchecked.map((r) => (r.from === r.to ? r.from : `${r.from} to ${r.to}`)).join(', '))}. Problems on those dates are unknown, not zero.</p>`;

  // 1. What needs attention: one row per kind, its counts and money per currency, meaning and to-do.
  const kinds = [...new Set(d.byKind.map((k) => k.kind))];
  const attentionRows: Cell[][] = kinds.map((kind) => {
    const rows = d.byKind.filter((k) => k.kind === kind);
    const { means, todo } = explainKind(kind);
    const link = worklistLink({ kind }, 'open in the workbench');
    return [
      { html: `<b>${esc(kindName(kind))}</b><br><code>${esc(kind)}</code>${link ? `<br>${link}` : ''}` },
      { html: rows.map((r) => `${esc(currencyLabel(r.currency))} ${esc(count(r.count))}`).join('<br>') },
      { html: rows.map((r) => esc(formatMoney(r.currency, r.amount_cents))).join('<br>') },
      means,
      todo,
    ];
  });
  const noCurrency = d.byKind.some((k) => k.currency === null)
    ? '<p class="note">(none): the discrepancy was recorded without a currency (the side that has the item gave none).</p>'
    : '';
  const totalOpen = d.totals.reduce((n, t) => n + t.count, 0);
  const money = d.totals.length
    ? d.totals.map((t) => `<b>${esc(formatMoney(t.currency, t.amount_cents))}</b>`).join('')
    : `<b>${c.checkedDays === 0 ? 'not checked' : 'none'}</b>`;
  const oldest = d.oldestOpen[0];
  const byAccountRows = d.byAccount.map((a) => [
    a.account,
    currencyLabel(a.currency),
    count(a.count),
    formatMoney(a.currency, a.amount_cents),
  ]);

  // 2. The largest (per currency) and oldest open items, with their ids.
  const itemRows = (rows: readonly DiscrepancyRow[]): Cell[][] =>
    rows.map((r) => [
      idCell(r),
      r.business_date ?? '',
      count(ageDays(r)),
      kindName(r.kind),
      r.status + (r.assignee ? ` (${r.assignee})` : ''),
      formatMoney(r.currency, r.stake_cents),
      r.transaction_id ?? r.return_transaction_id ?? '',
      r.merchant_transaction_id ?? '',
    ]);
  const itemHeader = [
    'Id',
    'Day',
    'Age (days)',
    'Kind',
    'Status',
    'At stake',
    'Transaction',
    'Merchant transaction',
  ];

  // 3. Every open problem, per currency, by money at stake then age.
  const open = d.discrepancies.filter((r) => r.resolved_at === null).sort(byStakeThenAge);
  const limit = options.detailLimit ?? 500;
  const openCurrencies = [...new Set(open.map((r) => r.currency))];
  const problemLists = openCurrencies.map((currency) => {
    const rows = open.filter((r) => r.currency === currency);
    const label = currencyLabel(currency);
    const shown = rows.slice(0, limit);
    const more = rows.length - shown.length;
    return `<h3>${esc(label)}: ${count(rows.length)} open</h3>
<p class="shown">${more > 0 ? `<strong>Showing the ${count(shown.length)} with the most money at stake; ${count(more)} more not shown.</strong> ${seeAll(currency ?? undefined)}` : `All ${count(rows.length)} shown.`}</p>
${htmlTable(
  [
    'Id',
    'Day',
    'Kind',
    'Status',
    'Currency',
    'At stake',
    'Expected',
    'Actual',
    'Transaction',
    'Merchant transaction',
    'Note',
  ],
  shown.map((r) => [
    idCell(r),
    r.business_date ?? '',
    r.kind,
    r.status,
    label,
    formatCents(r.stake_cents),
    formatCents(r.expected_amount_cents),
    formatCents(r.actual_amount_cents),
    r.transaction_id ?? r.return_transaction_id ?? '',
    r.merchant_transaction_id ?? '',
    r.note ?? '',
  ]),
  [5, 6, 7],
)}`;
  });

  // 4. Volumes and charts, last.
  const types = [...new Set(d.volumes.map((v) => v.type))].sort((a, b) =>
    a === null ? 1 : b === null ? -1 : a.localeCompare(b),
  );
  const unknownNote = `the provider's type code${d.unknownTypeCodes.length === 1 ? '' : 's'} ${d.unknownTypeCodes.join(', ') || '(none)'} ${d.unknownTypeCodes.length === 1 ? 'is' : 'are'} neither DEBIT nor CREDIT; counted apart, never as a payin or payout`;
  const currencies = [...new Set(d.volumes.map((v) => v.currency))].sort();
  // One chart per currency: a bar that stacked CAD on USD would add them.
  const volumeCharts = currencies.map((currency) =>
    barChart(
      `Successful transactions per day, ${currency} (amount)`,
      days,
      types.map((t, i) => ({
        name: typeName(t),
        ...(t === null ? { note: unknownNote } : {}),
        color: t === null ? '#7f7f7f' : PALETTE[i % PALETTE.length]!,
        values: days.map(
          (day) =>
            d.volumes.find((v) => v.day === day && v.type === t && v.currency === currency)?.amount_cents ??
            0,
        ),
      })),
      (v) => `${currency} ${formatCents(v)}`,
    ),
  );
  const kindSeries = kinds.map((k, i) => ({
    name: kindName(k),
    color: PALETTE[i % PALETTE.length]!,
    values: days.map((day) =>
      d.byDay.filter((v) => v.day === day && v.kind === k).reduce((n, v) => n + v.count, 0),
    ),
  }));
  const returnCodes = [...new Set(d.returnsByCode.map((r) => r.code))];

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reconciliation ${esc(d.from)} to ${esc(d.to)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1040px;padding:0 16px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.15em;margin-top:32px;border-bottom:1px solid #ccc;padding-bottom:4px}h3{font-size:1em;margin:16px 0 4px}
.lead{color:#555}.cards{display:flex;gap:16px;margin:16px 0}.card{flex:1;border:1px solid #ddd;border-radius:6px;padding:12px}
.card b{display:block;font-size:1.6em}table{border-collapse:collapse;width:100%;font-size:.9em;margin:8px 0}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f6f6}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}.legend{font-size:.85em}.key{margin-right:12px}.key-note{color:#555}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}.none{color:#777}.note,.outlier-note{color:#555;font-size:.85em}
.unchecked{background:#fff4e5;border-left:4px solid #e8a33d;padding:8px 12px}.covered{color:#555}
nav{font-size:.9em}nav a{margin-right:12px}#attention-table td:nth-child(2),#attention-table td:nth-child(3){white-space:nowrap;font-variant-numeric:tabular-nums}#attention-table td:first-child{width:18%}
details summary{cursor:pointer;color:#1f5fa8}
</style></head><body>
<h1>Reconciliation report, ${esc(d.from)} to ${esc(d.to)}</h1>
<p class="lead">Eastern business dates. Money at stake is the difference for an amount or fee disagreement and the whole amount for a missing or disputed item, in the currency shown beside it; amounts of different currencies are never added together. Generated ${esc(generatedAt)}.</p>
<nav><a href="#attention">What needs attention</a><a href="#largest">Largest open items</a><a href="#oldest">Oldest open items</a><a href="#problems">Every open problem</a><a href="#volumes">Volumes and charts</a></nav>
${coverage}
<div class="cards">
<div class="card">Open problems<b>${c.checkedDays === 0 ? 'not checked' : count(totalOpen)}</b>${c.checkedDays > 0 && c.checkedDays < c.days ? 'on the checked dates' : ''}</div>
<div class="card">Money at stake${money}</div>
<div class="card">Oldest open<b>${oldest ? esc(oldest.business_date) : c.checkedDays === 0 ? 'not checked' : 'none'}</b>${oldest ? `${count(ageDays(oldest))} days ago` : ''}</div>
</div>
<h2 id="attention">What needs attention</h2>
<p>Open (unresolved) problems by kind and currency, with what each kind means and what to do.${base ? ` ${worklistLink({}, 'Open the worklist in the workbench')}.` : ''}</p>
${htmlTable(['Kind', 'Open', 'Money at stake', 'What it means', 'What to do'], attentionRows, [], noProblems, 'attention-table')}
${noCurrency}
${d.byAccount.length ? '<h3>Open problems by account and currency</h3>' : ''}
${htmlTable(['Account', 'Currency', 'Open', 'Money at stake'], byAccountRows, [2, 3], '', 'account-table')}
<h2 id="largest">Largest open items</h2>
<p>The ${d.largestOpen.length ? 'open items' : 'items'} with the most money at stake, up to 10 per currency (amounts of different currencies are not compared).${base ? ' Each id opens the item in the workbench with its evidence.' : ' Show one with its evidence: <code>recon discrepancies show ID</code>.'}</p>
${htmlTable(itemHeader, itemRows(d.largestOpen), [2, 5], noProblems, 'largest-table')}
<h2 id="oldest">Oldest open items</h2>
<p>The open items of the earliest business dates: the longer one stays open, the harder it is to recover. Age in days since the business date.</p>
${htmlTable(itemHeader, itemRows(d.oldestOpen), [2, 5], noProblems, 'oldest-table')}
<h2 id="problems">Every open problem</h2>
<p>Per currency, the most money at stake first, then the oldest.</p>
${problemLists.length ? problemLists.join('\n') : noProblems}
<h2 id="volumes">Volumes and charts</h2>
<p>${count(d.volumes.reduce((n, v) => n + v.count, 0))} successful transactions and ${count(d.returnsByCode.reduce((n, v) => n + v.count, 0))} returns in the range.</p>
<h3>Open problems per day, by kind</h3>
<p>How many problems remain open for each business day, by kind. A bar that does not shrink after a few days needs someone to look at it.</p>
${barChart('Open problems per day, by kind (count)', days, kindSeries, (v) => String(v))}
<h3>Daily volumes</h3>
<p>Successful payins and payouts per day, as the provider reports them, one chart per currency.</p>
${volumeCharts.join('\n')}
<details><summary>The daily volumes as a table (${count(d.volumes.length)} rows)</summary>
${htmlTable(
  ['Day', 'Type', 'Currency', 'Transactions', 'Amount'],
  d.volumes.map((v) => [v.day, typeName(v.type), v.currency, count(v.count), formatCents(v.amount_cents)]),
  [3, 4],
)}
</details>
<h3>Returns by code</h3>
<p>Payments the consumer's bank sent back, by the bank's return code.</p>
${barChart(
  'Returns by return code (count)',
  returnCodes,
  [
    {
      name: 'Returns',
      color: PALETTE[3]!,
      values: returnCodes.map((code) =>
        d.returnsByCode.filter((r) => r.code === code).reduce((n, r) => n + r.count, 0),
      ),
    },
  ],
  (v) => String(v),
  { outliers: false }, // categories, not days: the commonest code is no outlier
)}
${htmlTable(
  ['Return code', 'Currency', 'Returns', 'Amount'],
  d.returnsByCode.map((r) => [r.code, r.currency, count(r.count), formatCents(r.amount_cents)]),
  [2, 3],
)}
</body></html>
`;
}
