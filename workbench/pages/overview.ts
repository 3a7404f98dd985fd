/** The overview page: four charts a finance lead looks at rather than reads (queries/overview.ts). */
import { datesBetween } from '../../domain/time/calendar.ts';
import { formatCents } from '../../reconcile/report/format-money.ts';
import type { Principal } from '../auth/sessions.ts';
import { AGE_BUCKETS, type Overview } from '../queries/overview.ts';
import { columnChart } from './charts.ts';
import { dateRangeForm, html, page } from './html.ts';

const count = (n: number) => Math.round(n).toLocaleString('en-US');

function currenciesOf(rows: { currency: string | null }[]): (string | null)[] {
  return [...new Set(rows.map((r) => r.currency))].sort((a, b) =>
    a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1,
  );
}

function openMoneyCharts(o: Overview, days: string[]) {
  const currencies = currenciesOf(o.open);
  if (currencies.length === 0)
    return html`<section class="chart" id="open-money">
      <h2>Open money at stake per business day</h2>
      <p class="muted">Nothing is open for business dates ${o.from} to ${o.to}.</p>
    </section>`;
  return currencies.map((currency) => {
    const byDay = new Map(o.open.filter((r) => r.currency === currency).map((r) => [r.day, Number(r.cents)]));
    const label = currency ?? 'no currency';
    return columnChart({
      id: `open-money-${currency ?? 'none'}`,
      title: `Open money at stake per business day, ${label}`,
      description: `Money at stake of unresolved discrepancies in ${label}, by business date, ${o.from} to ${o.to}.`,
      labels: days,
      series: [{ name: label, values: days.map((d) => byDay.get(d) ?? 0) }],
      format: (cents) => `${formatCents(Math.round(cents))} ${currency ?? ''}`.trim(),
    });
  });
}

function activityChart(o: Overview) {
  const days = datesBetween(o.activityFrom, o.activityTo);
  const byDay = new Map(o.activity.map((a) => [a.day, a]));
  return columnChart({
    id: 'new-resolved',
    title: 'New against resolved discrepancies per day',
    description: `Discrepancies first found and discrepancies resolved on each Eastern day, ${o.activityFrom} to ${o.activityTo}.`,
    labels: days,
    series: [
      { name: 'new', values: days.map((d) => Number(byDay.get(d)?.opened ?? 0)) },
      { name: 'resolved', values: days.map((d) => Number(byDay.get(d)?.resolved ?? 0)) },
    ],
    format: count,
  });
}

function matchedChart(o: Overview, days: string[]) {
  const byDay = new Map(o.matched.map((m) => [m.day, m]));
  const total = o.matched.reduce((n, m) => n + Number(m.transactions), 0);
  const clean = o.matched.reduce((n, m) => n + Number(m.clean), 0);
  const share = (m: { transactions: number; clean: number } | undefined) =>
    m && Number(m.transactions) > 0 ? (100 * Number(m.clean)) / Number(m.transactions) : 0;
  return html`<p class="headline" id="matched-share">
      ${
        total === 0
          ? html`No provider transaction for business dates ${o.from} to ${o.to}.`
          : html`<strong>${((100 * clean) / total).toFixed(1)} %</strong> of ${count(total)} provider
              transactions (${o.from} to ${o.to}) have no unresolved discrepancy.`
      }
    </p>
    ${columnChart({
      id: 'matched',
      title: 'Share of transactions matched per business day',
      description: `Per business date, the percentage of provider transactions with no unresolved discrepancy, ${o.from} to ${o.to}.`,
      labels: days,
      series: [{ name: 'matched', values: days.map((d) => share(byDay.get(d))) }],
      format: (p) => `${p.toFixed(p === 0 || p === 100 ? 0 : 1)} %`,
      max: 100,
    })}`;
}

function agesChart(o: Overview) {
  const currencies = currenciesOf(o.ages);
  const labels = AGE_BUCKETS.map(([, label]) => label);
  const money = (currency: string | null) =>
    labels
      .map((b) => {
        const r = o.ages.find((a) => a.bucket === b && a.currency === currency);
        return r ? `${b}: ${formatCents(r.cents)} ${currency ?? ''}` : null;
      })
      .filter((t) => t !== null)
      .join('; ');
  return html`${columnChart({
      id: 'ages',
      title: 'Age of open items',
      description: `Unresolved discrepancies by days since their business date (to ${o.today}), per currency.`,
      labels,
      series: currencies.map((c) => ({
        name: c ?? 'no currency',
        values: labels.map((b) => o.ages.find((a) => a.bucket === b && a.currency === c)?.count ?? 0),
      })),
      format: count,
    })}
    <ul class="muted small" id="ages-money">
      ${currencies.map((c) => html`<li>At stake in ${c ?? 'no currency'}: ${money(c)}</li>`)}
    </ul>`;
}

export function overviewPage(principal: Principal, o: Overview): string {
  const days = datesBetween(o.from, o.to);
  return page(
    'Overview',
    principal,
    html`<h1>Overview</h1>
      ${dateRangeForm({
        action: '/overview',
        id: 'overview-range',
        prefix: 'o',
        labels: ['Business dates from', 'to'],
        from: o.from,
        to: o.to,
      })}
      <div class="charts">
        ${openMoneyCharts(o, days)} ${activityChart(o)} ${matchedChart(o, days)} ${agesChart(o)}
      </div>`,
    { active: 'overview', skipLabel: 'Skip to the charts' },
  );
}
