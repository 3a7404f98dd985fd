import { daysInclusive } from '../../domain/time/calendar.ts';
import { explainKind } from '../rules/rules-in-words.ts';
import { barChart, PALETTE } from './bar-chart.ts';
import { currencyLabel, formatCents, formatMoney } from './format-money.ts';
import { type Cell, esc, type Html, htmlTable } from './html-table.ts';
import { byStakeThenAge, type DiscrepancyRow, type ReportData } from './report-data.ts';

export { chartScale, OUTLIER_FACTOR } from './bar-chart.ts';

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

const count = (n: number) => n.toLocaleString('en-CA');

/** What every section of one page needs: its data, its date and the workbench's address. */
interface Page {
  readonly d: ReportData;
  readonly generatedAt: string;
  /** The workbench's address without a trailing slash; undefined: no links. */
  readonly base: string | undefined;
  /** The business days of the charts. */
  readonly days: string[];
  /** The kinds with open problems, in the order of the attention table. */
  readonly kinds: string[];
  /** What a section with no problem says, as checked the range is. */
  readonly noProblems: string;
}

/**
 * A self-contained HTML page (no external resources), action first: what needs attention by kind and
 * currency with what to do, the largest and oldest open items with their ids, the open problems, and
 * only then the volumes and charts.
 */
export function renderHtmlReport(d: ReportData, options: HtmlReportOptions = {}): string {
  const c = d.coverage;
  const page: Page = {
    d,
    generatedAt: options.generatedAt ?? new Date().toISOString(),
    base: options.workbenchUrl?.replace(/\/+$/, ''),
    days: [...new Set([...d.volumes.map((v) => v.day), ...d.byDay.map((v) => v.day)])].sort(),
    kinds: [...new Set(d.byKind.map((k) => k.kind))],
    noProblems:
      c.checkedDays === c.days
        ? '<p class="none">None.</p>'
        : c.checkedDays === 0
          ? '<p class="unchecked">Not checked: no reconcile run covers this range.</p>'
          : `<p class="unchecked">None on the ${count(c.checkedDays)} checked dates; ${count(c.days - c.checkedDays)} dates not checked.</p>`,
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reconciliation ${esc(d.from)} to ${esc(d.to)}</title>
<style>
${STYLE}
</style></head><body>
<h1>Reconciliation report, ${esc(d.from)} to ${esc(d.to)}</h1>
<p class="lead">Eastern business dates. Money at stake is the difference for an amount or fee disagreement and the whole amount for a missing or disputed item, in the currency shown beside it; amounts of different currencies are never added together. Generated ${esc(page.generatedAt)}.</p>
<nav><a href="#attention">What needs attention</a><a href="#largest">Largest open items</a><a href="#oldest">Oldest open items</a><a href="#problems">Every open problem</a><a href="#volumes">Volumes and charts</a></nav>
${coverageNote(d)}
${headlineCards(page)}
${attentionSection(page)}
${openItemsSections(page)}
<h2 id="problems">Every open problem</h2>
<p>Per currency, the most money at stake first, then the oldest.</p>
${problemLists(page, options.detailLimit ?? 500)}
${volumesSection(page)}
</body></html>
`;
}

const STYLE = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1040px;padding:0 16px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.15em;margin-top:32px;border-bottom:1px solid #ccc;padding-bottom:4px}h3{font-size:1em;margin:16px 0 4px}
.lead{color:#555}.cards{display:flex;gap:16px;margin:16px 0}.card{flex:1;border:1px solid #ddd;border-radius:6px;padding:12px}
.card b{display:block;font-size:1.6em}table{border-collapse:collapse;width:100%;font-size:.9em;margin:8px 0}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f6f6}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}.legend{font-size:.85em}.key{margin-right:12px}.key-note{color:#555}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}.none{color:#777}.note,.outlier-note{color:#555;font-size:.85em}
.unchecked{background:#fff4e5;border-left:4px solid #e8a33d;padding:8px 12px}.covered{color:#555}
nav{font-size:.9em}nav a{margin-right:12px}#attention-table td:nth-child(2),#attention-table td:nth-child(3){white-space:nowrap;font-variant-numeric:tabular-nums}#attention-table td:first-child{width:18%}
details summary{cursor:pointer;color:#1f5fa8}`;

/** A link to the workbench's worklist of the range, filtered by `params`; '' without a workbench. */
function worklistLink(p: Page, params: Record<string, string>, text: string): string {
  return p.base
    ? `<a href="${esc(`${p.base}/?${new URLSearchParams({ from: p.d.from, to: p.d.to, ...params })}`)}">${esc(text)}</a>`
    : '';
}

function idCell(p: Page, r: DiscrepancyRow): Html {
  return {
    html: p.base
      ? `<a href="${esc(`${p.base}/discrepancies/${r.discrepancy_id}`)}">#${r.discrepancy_id}</a>`
      : `#${r.discrepancy_id}`,
  };
}

/** Days since the item's business date, to the page's date. */
function ageDays(p: Page, r: DiscrepancyRow): number {
  const today = p.generatedAt.slice(0, 10);
  return Math.max(0, daysInclusive(r.business_date ?? today, today) - 1);
}

/** Where to see every open problem when the page lists only some. */
function seeAll(p: Page, currency?: string): string {
  const { d, base } = p;
  return `To see all: ${base ? `${worklistLink(p, currency ? { currency } : {}, 'the workbench')}, ` : 'the workbench (recon serve), '}<code>recon discrepancies list --from ${esc(d.from)} --to ${esc(d.to)}${currency ? ` --currency ${esc(currency)}` : ''}</code>, or <code>recon report --from ${esc(d.from)} --to ${esc(d.to)} --csv FILE</code>.`;
}

/** Whether reconcile runs checked every date of the range: unchecked dates are unknown, not zero. */
function coverageNote(d: ReportData): string {
  const c = d.coverage;
  return c.checkedDays === c.days
    ? `<p class="covered">Every date of the range (${count(c.days)}) was checked by a reconcile run; the latest committed ${esc(c.lastRunAt)}.</p>`
    : c.checkedDays === 0
      ? `<p class="unchecked"><strong>Not checked:</strong> no reconcile run covers any date of ${esc(d.from)} to ${esc(d.to)}. Nothing on this page has been matched; the problem counts below are not zero, they are unknown. Run <code>recon reconcile --from ${esc(d.from)} --to ${esc(d.to)}</code> first.</p>`
      : `<p class="unchecked"><strong>Incomplete:</strong> ${count(c.days - c.checkedDays)} of ${count(c.days)} dates were never checked by a reconcile run: ${esc(c.unchecked.map((r) => (r.from === r.to ? r.from : `${r.from} to ${r.to}`)).join(', '))}. Problems on those dates are unknown, not zero.</p>`;
}

/** The three cards at the top: open problems, money at stake, the oldest open item. */
function headlineCards(p: Page): string {
  const { d } = p;
  const c = d.coverage;
  const totalOpen = d.totals.reduce((n, t) => n + t.count, 0);
  const money = d.totals.length
    ? d.totals.map((t) => `<b>${esc(formatMoney(t.currency, t.amount_cents))}</b>`).join('')
    : `<b>${c.checkedDays === 0 ? 'not checked' : 'none'}</b>`;
  const oldest = d.oldestOpen[0];
  return `<div class="cards">
<div class="card">Open problems<b>${c.checkedDays === 0 ? 'not checked' : count(totalOpen)}</b>${c.checkedDays > 0 && c.checkedDays < c.days ? 'on the checked dates' : ''}</div>
<div class="card">Money at stake${money}</div>
<div class="card">Oldest open<b>${oldest ? esc(oldest.business_date) : c.checkedDays === 0 ? 'not checked' : 'none'}</b>${oldest ? `${count(ageDays(p, oldest))} days ago` : ''}</div>
</div>`;
}

/** 1. What needs attention: one row per kind, its counts and money per currency, meaning and to-do. */
function attentionSection(p: Page): string {
  const { d, base } = p;
  const attentionRows: Cell[][] = p.kinds.map((kind) => {
    const rows = d.byKind.filter((k) => k.kind === kind);
    const { means, todo } = explainKind(kind);
    const link = worklistLink(p, { kind }, 'open in the workbench');
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
  const byAccountRows = d.byAccount.map((a) => [
    a.account,
    currencyLabel(a.currency),
    count(a.count),
    formatMoney(a.currency, a.amount_cents),
  ]);
  return `<h2 id="attention">What needs attention</h2>
<p>Open (unresolved) problems by kind and currency, with what each kind means and what to do.${base ? ` ${worklistLink(p, {}, 'Open the worklist in the workbench')}.` : ''}</p>
${htmlTable(['Kind', 'Open', 'Money at stake', 'What it means', 'What to do'], attentionRows, [], p.noProblems, 'attention-table')}
${noCurrency}
${d.byAccount.length ? '<h3>Open problems by account and currency</h3>' : ''}
${htmlTable(['Account', 'Currency', 'Open', 'Money at stake'], byAccountRows, [2, 3], '', 'account-table')}`;
}

const ITEM_HEADER = [
  'Id',
  'Day',
  'Age (days)',
  'Kind',
  'Status',
  'At stake',
  'Transaction',
  'Merchant transaction',
];

/** 2. The largest (per currency) and oldest open items, with their ids. */
function openItemsSections(p: Page): string {
  const { d, base } = p;
  const itemRows = (rows: readonly DiscrepancyRow[]): Cell[][] =>
    rows.map((r) => [
      idCell(p, r),
      r.business_date ?? '',
      count(ageDays(p, r)),
      kindName(r.kind),
      r.status + (r.assignee ? ` (${r.assignee})` : ''),
      formatMoney(r.currency, r.stake_cents),
      r.transaction_id ?? r.return_transaction_id ?? '',
      r.merchant_transaction_id ?? '',
    ]);
  return `<h2 id="largest">Largest open items</h2>
<p>The ${d.largestOpen.length ? 'open items' : 'items'} with the most money at stake, up to 10 per currency (amounts of different currencies are not compared).${base ? ' Each id opens the item in the workbench with its evidence.' : ' Show one with its evidence: <code>recon discrepancies show ID</code>.'}</p>
${htmlTable(ITEM_HEADER, itemRows(d.largestOpen), [2, 5], p.noProblems, 'largest-table')}
<h2 id="oldest">Oldest open items</h2>
<p>The open items of the earliest business dates: the longer one stays open, the harder it is to recover. Age in days since the business date.</p>
${htmlTable(ITEM_HEADER, itemRows(d.oldestOpen), [2, 5], p.noProblems, 'oldest-table')}`;
}

/** 3. Every open problem, per currency, by money at stake then age; at most `limit` per currency. */
function problemLists(p: Page, limit: number): string {
  const open = p.d.discrepancies.filter((r) => r.resolved_at === null).sort(byStakeThenAge);
  const openCurrencies = [...new Set(open.map((r) => r.currency))];
  const lists = openCurrencies.map((currency) => {
    const rows = open.filter((r) => r.currency === currency);
    const label = currencyLabel(currency);
    const shown = rows.slice(0, limit);
    const more = rows.length - shown.length;
    return `<h3>${esc(label)}: ${count(rows.length)} open</h3>
<p class="shown">${more > 0 ? `<strong>Showing the ${count(shown.length)} with the most money at stake; ${count(more)} more not shown.</strong> ${seeAll(p, currency ?? undefined)}` : `All ${count(rows.length)} shown.`}</p>
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
    idCell(p, r),
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
  return lists.length ? lists.join('\n') : p.noProblems;
}

/** 4. Volumes and charts, last. */
function volumesSection(p: Page): string {
  const { d, days } = p;
  const kindSeries = p.kinds.map((k, i) => ({
    name: kindName(k),
    color: PALETTE[i % PALETTE.length]!,
    values: days.map((day) =>
      d.byDay.filter((v) => v.day === day && v.kind === k).reduce((n, v) => n + v.count, 0),
    ),
  }));
  return `<h2 id="volumes">Volumes and charts</h2>
<p>${count(d.volumes.reduce((n, v) => n + v.count, 0))} successful transactions and ${count(d.returnsByCode.reduce((n, v) => n + v.count, 0))} returns in the range.</p>
<h3>Open problems per day, by kind</h3>
<p>How many problems remain open for each business day, by kind. A bar that does not shrink after a few days needs someone to look at it.</p>
${barChart('Open problems per day, by kind (count)', days, kindSeries, (v) => String(v))}
<h3>Daily volumes</h3>
<p>Successful payins and payouts per day, as the provider reports them, one chart per currency.</p>
${volumeCharts(p).join('\n')}
<details><summary>The daily volumes as a table (${count(d.volumes.length)} rows)</summary>
${htmlTable(
  ['Day', 'Type', 'Currency', 'Transactions', 'Amount'],
  d.volumes.map((v) => [v.day, typeName(v.type), v.currency, count(v.count), formatCents(v.amount_cents)]),
  [3, 4],
)}
</details>
${returnsByCode(d)}`;
}

/** One chart per currency: a bar that stacked CAD on USD would add them. */
function volumeCharts(p: Page): string[] {
  const { d, days } = p;
  const types = [...new Set(d.volumes.map((v) => v.type))].sort((a, b) =>
    a === null ? 1 : b === null ? -1 : a.localeCompare(b),
  );
  const unknownNote = `the provider's type code${d.unknownTypeCodes.length === 1 ? '' : 's'} ${d.unknownTypeCodes.join(', ') || '(none)'} ${d.unknownTypeCodes.length === 1 ? 'is' : 'are'} neither DEBIT nor CREDIT; counted apart, never as a payin or payout`;
  const currencies = [...new Set(d.volumes.map((v) => v.currency))].sort();
  return currencies.map((currency) =>
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
}

/** Payments the consumer's bank sent back, by the bank's return code: a chart and a table. */
function returnsByCode(d: ReportData): string {
  const returnCodes = [...new Set(d.returnsByCode.map((r) => r.code))];
  return `<h3>Returns by code</h3>
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
)}`;
}
