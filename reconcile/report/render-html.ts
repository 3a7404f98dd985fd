import { currencyLabel, formatCents, formatMoney } from './format-money.ts';
import type { ReportData } from './report-data.ts';

/** What each kind means, in words a finance person uses. */
export const KIND_HELP: Record<string, string> = {
  missing_in_ledger: 'The provider moved money (or may still) but the merchant ledger has no entry.',
  missing_at_provider:
    'The ledger has an entry the provider never reported, after the grace period in business days.',
  amount_mismatch: 'Both sides have the transaction (or return) but the amounts differ.',
  currency_mismatch: 'Both sides have it but in different currencies.',
  type_mismatch: 'The provider says payin (DEBIT) and the ledger payout (CREDIT), or the reverse.',
  status_mismatch: 'One side says it succeeded, the other that it was rejected or failed.',
  return_not_booked: 'The bank returned the payment but the ledger has no RETURN entry for it.',
  fee_mismatch: 'The fee charged differs from the notification or from the contracted fee schedule.',
  notification_missing: 'The provider says it notified us, but no notification was received.',
  notification_late: 'The notification came later than the allowed delay.',
  notification_undelivered:
    'The provider reports the notification as not sent (I) or sent but not confirmed (S), and none was received.',
  notification_mismatch: 'The notification says something different from the report (amount, status, ...).',
  duplicate_merchant_transaction: 'The provider has two transactions for one merchant transaction id.',
  source_conflict: 'The JSON report and the legacy report disagree about the same transaction.',
};

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
}

/** A stacked vertical bar chart as inline SVG, with axis labels and a legend. */
function barChart(
  title: string,
  categories: string[],
  series: Series[],
  format: (v: number) => string,
): string {
  const width = 860;
  const height = 300;
  const left = 90;
  const bottom = 60;
  const top = 20;
  const plotH = height - top - bottom;
  const plotW = width - left - 20;
  const totals = categories.map((_, i) => series.reduce((n, s) => n + (s.values[i] ?? 0), 0));
  // Gridlines at round values (1, 2 or 5 times a power of ten), so that every label is exact.
  const raw = Math.max(1, ...totals) / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const tick = Math.max(1, [1, 2, 5, 10].map((m) => m * magnitude).find((v) => v >= raw) ?? raw);
  const max = tick * 4;
  const step = plotW / Math.max(1, categories.length);
  const barW = Math.max(2, step * 0.7);
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
    let y = top + plotH;
    const x = left + i * step + (step - barW) / 2;
    for (const s of series) {
      const v = s.values[i] ?? 0;
      if (v <= 0) continue;
      const h = (plotH * v) / max;
      y -= h;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${s.color}"><title>${esc(cat)} ${esc(s.name)}: ${esc(format(v))}</title></rect>`,
      );
    }
    if (i % labelEvery === 0) {
      parts.push(
        `<text x="${(x + barW / 2).toFixed(1)}" y="${top + plotH + 14}" text-anchor="end" font-size="10" transform="rotate(-35 ${(x + barW / 2).toFixed(1)} ${top + plotH + 14})">${esc(cat)}</text>`,
      );
    }
  });
  const legend = series
    .map(
      (s) =>
        `<span class="key"><span class="swatch" style="background:${s.color}"></span>${esc(s.name)}</span>`,
    )
    .join(' ');
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-label="${esc(title)}">${parts.join('')}</svg><div class="legend">${legend}</div></figure>`;
}

function htmlTable(
  header: string[],
  rows: (string | number)[][],
  numeric: number[] = [],
  empty = '<p class="none">None.</p>',
): string {
  if (rows.length === 0) return empty;
  const th = header.map((h, i) => `<th${numeric.includes(i) ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => `<td${numeric.includes(i) ? ' class="num"' : ''}>${esc(c)}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A self-contained HTML page (no external resources): charts as inline SVG and the tables behind them. */
export function renderHtmlReport(
  d: ReportData,
  options: { generatedAt?: string; detailLimit?: number } = {},
): string {
  const days = [...new Set([...d.volumes.map((v) => v.day), ...d.byDay.map((v) => v.day)])].sort();
  const types = [...new Set(d.volumes.map((v) => v.type))].sort();
  const currencies = [...new Set(d.volumes.map((v) => v.currency))].sort();
  // One chart per currency: a bar that stacked CAD on USD would add them.
  const volumeCharts = currencies.map((currency) =>
    barChart(
      `Successful transactions per day, ${currency} (amount)`,
      days,
      types.map((t, i) => ({
        name: t === 'DEBIT' ? 'Payins (DEBIT)' : t === 'CREDIT' ? 'Payouts (CREDIT)' : t,
        color: PALETTE[i % PALETTE.length]!,
        values: days.map(
          (day) =>
            d.volumes.find((v) => v.day === day && v.type === t && v.currency === currency)?.amount_cents ??
            0,
        ),
      })),
      formatCents,
    ),
  );
  const kinds = [...new Set(d.byKind.map((k) => k.kind))];
  const kindSeries = kinds.map((k, i) => ({
    name: k,
    color: PALETTE[i % PALETTE.length]!,
    values: days.map((day) =>
      d.byDay.filter((v) => v.day === day && v.kind === k).reduce((n, v) => n + v.count, 0),
    ),
  }));
  const returnCodes = [...new Set(d.returnsByCode.map((r) => r.code))];
  const totalOpen = d.totals.reduce((n, t) => n + t.count, 0);
  const money = d.totals.length
    ? d.totals.map((t) => `<b>${esc(formatMoney(t.currency, t.amount_cents))}</b>`).join('')
    : `<b>${d.coverage.checkedDays === 0 ? 'not checked' : 'none'}</b>`;
  const limit = options.detailLimit ?? 500;
  const open = d.discrepancies.filter((r) => r.resolved_at === null);
  const count = (n: number) => n.toLocaleString('en-CA');
  const c = d.coverage;
  const coverage =
    c.checkedDays === c.days
      ? `<p class="covered">Every date of the range (${count(c.days)}) was checked by a reconcile run; the latest committed ${esc(c.lastRunAt)}.</p>`
      : c.checkedDays === 0
        ? `<p class="unchecked"><strong>Not checked:</strong> no reconcile run covers any date of ${esc(d.from)} to ${esc(d.to)}. Nothing on this page has been matched; the problem counts below are not zero, they are unknown. Run <code>recon reconcile --from ${esc(d.from)} --to ${esc(d.to)}</code> first.</p>`
        : `<p class="unchecked"><strong>Incomplete:</strong> ${count(c.days - c.checkedDays)} of ${count(c.days)} dates were never checked by a reconcile run: ${esc(c.unchecked.map((r) => (r.from === r.to ? r.from : `${r.from} to ${r.to}`)).join(', '))}. Problems on those dates are unknown, not zero.</p>`;
  const noProblems =
    c.checkedDays === c.days
      ? '<p class="none">None.</p>'
      : c.checkedDays === 0
        ? '<p class="unchecked">Not checked: no reconcile run covers this range.</p>'
        : `<p class="unchecked">None on the ${count(c.checkedDays)} checked dates; ${count(c.days - c.checkedDays)} dates not checked.</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reconciliation ${esc(d.from)} to ${esc(d.to)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:960px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.15em;margin-top:32px;border-bottom:1px solid #ccc;padding-bottom:4px}
.lead{color:#555}.cards{display:flex;gap:16px;margin:16px 0}.card{flex:1;border:1px solid #ddd;border-radius:6px;padding:12px}
.card b{display:block;font-size:1.6em}table{border-collapse:collapse;width:100%;font-size:.9em;margin:8px 0}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left}th{background:#f6f6f6}.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}.legend{font-size:.85em}.key{margin-right:12px;white-space:nowrap}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}.none{color:#777}
.unchecked{background:#fff4e5;border-left:4px solid #e8a33d;padding:8px 12px}.covered{color:#555}
</style></head><body>
<h1>Reconciliation report, ${esc(d.from)} to ${esc(d.to)}</h1>
<p class="lead">Eastern business dates. Amounts as the provider and the ledger state them, in the currency shown beside each; a problem about a difference counts the difference, a missing item its whole amount. Amounts of different currencies are never added together. Generated ${esc(options.generatedAt ?? new Date().toISOString())}.</p>
${coverage}
<div class="cards">
<div class="card">Open problems<b>${c.checkedDays === 0 ? 'not checked' : count(totalOpen)}</b>${c.checkedDays > 0 && c.checkedDays < c.days ? 'on the checked dates' : ''}</div>
<div class="card">Money concerned${money}</div>
<div class="card">Successful transactions<b>${count(d.volumes.reduce((n, v) => n + v.count, 0))}</b></div>
<div class="card">Returns<b>${count(d.returnsByCode.reduce((n, v) => n + v.count, 0))}</b></div>
</div>
<h2>Daily volumes</h2>
<p>Successful payins and payouts per day, as the provider reports them.</p>
${volumeCharts.join('\n')}
${htmlTable(
  ['Day', 'Type', 'Currency', 'Transactions', 'Amount'],
  d.volumes.map((v) => [v.day, v.type, v.currency, count(v.count), formatCents(v.amount_cents)]),
  [3, 4],
)}
<h2>Open problems by kind over time</h2>
<p>How many problems remain open for each day, by kind. A bar that does not shrink after a few days needs someone to look at it.</p>
${barChart('Open problems per day, by kind', days, kindSeries, (v) => String(v))}
${htmlTable(
  ['Kind', 'What it means', 'Currency', 'Open', 'Amount'],
  d.byKind.map((k) => [
    k.kind,
    KIND_HELP[k.kind] ?? '',
    currencyLabel(k.currency),
    count(k.count),
    formatCents(k.amount_cents),
  ]),
  [3, 4],
  noProblems,
)}
<h2>Returns by code</h2>
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
)}
${htmlTable(
  ['Return code', 'Currency', 'Returns', 'Amount'],
  d.returnsByCode.map((r) => [r.code, r.currency, count(r.count), formatCents(r.amount_cents)]),
  [2, 3],
)}
<h2>Open problems, one per line</h2>
<p>${open.length > limit ? `The first ${limit} of ${count(open.length)}; the CSV export (recon report --csv) has them all.` : 'Every open problem of the range.'}</p>
${htmlTable(
  [
    'Day',
    'Kind',
    'Transaction',
    'Merchant transaction',
    'Currency',
    'Expected',
    'Actual',
    'Difference',
    'Note',
  ],
  open
    .slice(0, limit)
    .map((r) => [
      r.business_date,
      r.kind,
      r.transaction_id ?? r.return_transaction_id ?? '',
      r.merchant_transaction_id ?? '',
      currencyLabel(r.currency),
      formatCents(r.expected_amount_cents),
      formatCents(r.actual_amount_cents),
      formatCents(r.difference_cents),
      r.note ?? '',
    ]),
  [5, 6, 7],
  noProblems,
)}
</body></html>
`;
}
