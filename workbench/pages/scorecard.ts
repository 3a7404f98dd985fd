/** The provider scorecard page: per account, source and Eastern day, how late data and notifications came. */
import type { Principal } from '../auth/sessions.ts';
import type { ScorecardRow } from '../queries/scorecard.ts';
import { html, page, scrollBox } from './html.ts';

/** A delay in whole units a person reads at a glance: `45 s`, `12 min`, `6 h 5 min`, `2 d 3 h`. */
export function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  const sign = seconds < 0 ? '-' : '';
  const s = Math.abs(seconds);
  if (s < 120) return `${sign}${s} s`;
  if (s < 7200) return `${sign}${Math.floor(s / 60)} min`;
  if (s < 172_800) return `${sign}${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${sign}${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** Data later than a day after its day ended is marked, so that a slow provider stands out. */
const LATE_SECONDS = 86_400;

function count(n: number | null) {
  return n === null ? html`<span class="muted">—</span>` : html`${n}`;
}

export function scorecardPage(
  principal: Principal,
  data: { from: string; to: string; account?: string | undefined; items: ScorecardRow[] },
): string {
  return page(
    'Provider scorecard',
    principal,
    html`<h1>Provider scorecard ${data.from} … ${data.to}</h1>
      <form method="get" action="/scorecard" class="filters">
        <label>From <input type="date" name="from" value="${data.from}" /></label>
        <label>To <input type="date" name="to" value="${data.to}" /></label>
        <label>Account <input name="account" value="${data.account ?? ''}" placeholder="all" /></label>
        <button>Show</button>
      </form>
      <p class="muted">
        Eastern days. Arrived: when the first load that held the day's rows finished, and how long after the
        day ended. Notifications: how long after the transaction's time the first notification came (median
        and 95th percentile). Not in sibling: rows this source has and its sibling lacks (report against
        legacy and back; notifications against the report; return notifications against the return report and
        back). JSON: /api/scorecard.
      </p>
      ${scrollBox(
        'Provider scorecard',
        html`<table id="scorecard" class="list">
          <thead>
            <tr>
              <th>Day</th>
              <th>Account</th>
              <th>Source</th>
              <th class="num">Rows</th>
              <th>Arrived</th>
              <th>Notified p50</th>
              <th>Notified p95</th>
              <th>Sibling</th>
              <th class="num">Not in sibling</th>
              <th class="num">Not notified</th>
            </tr>
          </thead>
          <tbody>
            ${data.items.map(
              (r) =>
                html`<tr>
                  <td>${r.business_date}</td>
                  <td>${r.account}</td>
                  <td>${r.source}</td>
                  <td class="num">${r.rows}</td>
                  <td
                    class="${(r.arrival_delay_seconds ?? 0) > LATE_SECONDS ? 'late' : ''}"
                    title="${r.first_loaded_at ?? ''}"
                  >
                    ${
                      r.first_load_id === null
                        ? html`<span class="muted">no rows</span>`
                        : html`load ${r.first_load_id}, ${duration(r.arrival_delay_seconds)}`
                    }
                  </td>
                  <td>${duration(r.notification_delay_p50_seconds)}</td>
                  <td>${duration(r.notification_delay_p95_seconds)}</td>
                  <td>${r.sibling_source ?? '—'}</td>
                  <td class="num">${count(r.rows_not_in_sibling)}</td>
                  <td class="num">${count(r.rows_not_notified)}</td>
                </tr>`,
            )}
          </tbody>
        </table>`,
      )}`,
    { active: 'scorecard' },
  );
}
