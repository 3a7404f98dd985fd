/** Runs and loads, the coverage calendar, and the sign-in page. */
import type { Principal } from '../auth/sessions.ts';
import type { CoverageDay } from '../queries/operations.ts';
import type { ScheduleState } from '../queries/schedule.ts';
import { dateRangeForm, html, page, printable, scrollBox, when } from './html.ts';

export function signInPage(next: string): string {
  return page(
    'Sign in',
    null,
    html`<h1>Sign in</h1>
      <form id="sign-in" class="sign-in" data-next="${next}">
        <label>User name <input name="username" id="username" autocomplete="username" required /></label>
        <label
          >Password
          <input name="password" id="password" type="password" autocomplete="current-password" required
        /></label>
        <button type="submit" id="sign-in-button">Sign in</button>
        <p class="error" data-error></p>
      </form>`,
  );
}

function schedulePanel(s: ScheduleState) {
  if (!s.reachable || s.paused === undefined)
    return html`<section id="schedule">
      <h2>Nightly schedule ${s.schedule_id}</h2>
      <p class="muted">${s.message ?? 'state unknown'}</p>
    </section>`;
  return html`<section id="schedule">
    <h2>Nightly schedule ${s.schedule_id}: ${s.paused ? html`<span class="bad">paused</span>` : 'active'}</h2>
    ${s.note ? html`<p>${printable(s.note)}</p>` : html``}
    <p>
      Next: ${(s.next ?? []).length ? (s.next ?? []).map((n, i) => html`${i ? ', ' : ''}${when(n)}`) : 'none'}
    </p>
    <ul>
      ${(s.recent ?? []).map(
        (r) =>
          html`<li>
            ${when(r.scheduled_at)}: <code>${r.workflow_id}</code>
            <span class="${r.status === 'COMPLETED' ? '' : 'bad'}">${r.status}</span>
          </li>`,
      )}
    </ul>
  </section>`;
}

const count = (n: unknown) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n ?? ''));

/** What a run did, in words and numbers: matched rows, then the discrepancies' lifecycle. */
export function runInWords(summary: unknown): string {
  const o = (summary ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  const matched = o.matched as Record<string, number> | undefined;
  if (matched && typeof matched === 'object') {
    const m = Object.entries(matched)
      .filter(([, n]) => typeof n === 'number' && n > 0)
      .map(([what, n]) => `${count(n)} ${what}`);
    if (m.length) parts.push(`matched ${m.join(', ')}`);
  }
  const l = o.lifecycle as Record<string, number> | undefined;
  if (l && typeof l === 'object') {
    const words: [string, string][] = [
      ['opened', 'newly found'],
      ['reopened', 'found again'],
      ['changed', 'changed'],
      ['resolved', 'no longer found'],
      ['unchanged', 'still open'],
    ];
    const d = words.filter(([k]) => typeof l[k] === 'number').map(([k, w]) => `${count(l[k])} ${w}`);
    if (d.length) parts.push(`discrepancies: ${d.join(', ')}`);
  }
  if (typeof o.totalDiscrepancies === 'number')
    parts.push(`${count(o.totalDiscrepancies)} holding after the run`);
  if (o.matching === 'reused') parts.push('matching reused from an identical earlier run');
  if (typeof o.durationMs === 'number') parts.push(`took ${(o.durationMs / 1000).toFixed(1)} s`);
  return parts.length ? `${parts.join('; ')}.` : 'No summary recorded.';
}

export function runsPage(
  principal: Principal,
  runs: Record<string, unknown>[],
  loads: Record<string, unknown>[],
  schedule: ScheduleState,
): string {
  const runsTable = html`<table id="runs" class="list">
    <thead>
      <tr>
        <th scope="col">Run</th>
        <th scope="col">Account</th>
        <th scope="col">Business dates</th>
        <th scope="col">As of</th>
        <th scope="col">Started</th>
        <th scope="col">Finished</th>
        <th scope="col">What it did</th>
      </tr>
    </thead>
    <tbody>
      ${runs.map(
        (r) =>
          html`<tr>
            <td>${r.run_id}</td>
            <td>${r.account}</td>
            <td>${r.range_from} to ${r.range_to}</td>
            <td>${when(r.as_of)}</td>
            <td>${when(r.started_at)}</td>
            <td>${r.finished_at ? when(r.finished_at) : html`<span class="bad">not finished</span>`}</td>
            <td class="words">${r.finished_at ? runInWords(r.summary) : ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
  const loadsTable = html`<table id="loads" class="list">
    <thead>
      <tr>
        <th scope="col">Load</th>
        <th scope="col">Account</th>
        <th scope="col">Source</th>
        <th scope="col">Origin</th>
        <th scope="col">File or window</th>
        <th scope="col">Status</th>
        <th scope="col" class="num">Read</th>
        <th scope="col" class="num">Loaded</th>
        <th scope="col" class="num">Rejected</th>
        <th scope="col">Started</th>
        <th scope="col">Finished</th>
      </tr>
    </thead>
    <tbody>
      ${loads.map(
        (l) =>
          html`<tr class="${l.status === 'failed' ? 'failed' : ''}">
            <td>${l.load_id}</td>
            <td>${l.account}</td>
            <td>${l.source}</td>
            <td>${l.origin}</td>
            <td>
              ${
                l.file_name
                  ? printable(l.file_name, 120)
                  : l.window_start
                    ? html`${when(l.window_start)} to ${when(l.window_end)}`
                    : ''
              }
            </td>
            <td>
              ${l.status}${l.error ? html` <span class="bad provider-error">${printable(l.error)}</span>` : html``}
            </td>
            <td class="num">${count(l.rows_read)}</td>
            <td class="num">${count(l.rows_loaded)}</td>
            <td class="num">${count(l.rows_rejected)}</td>
            <td>${when(l.started_at)}</td>
            <td>${when(l.finished_at)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
  return page(
    'Runs and loads',
    principal,
    html`${schedulePanel(schedule)}
      <h1>Reconcile runs</h1>
      ${scrollBox('Reconcile runs', runsTable)}
      <h1>Loads</h1>
      ${scrollBox('Loads', loadsTable)}`,
    { active: 'runs' },
  );
}

export function coveragePage(
  principal: Principal,
  data: { from: string; to: string; sources: string[]; days: CoverageDay[] },
): string {
  const cell = (day: CoverageDay, source: string) => {
    const loads = day.sources[source] ?? [];
    const committed = loads.filter((l) => l.status === 'committed');
    const low = day.low_volume.filter((f) => f.source === source);
    if (committed.length > 0) {
      const last = committed.at(-1)!;
      return html`<td
        class="${low.length ? 'low-volume' : 'ok'}"
        title="load ${last.load_id}, ${last.rows_loaded} rows"
      >
        load ${last.load_id}<br /><small>${when(last.finished_at)}</small>
        ${low.map(
          (f) =>
            html`<br /><strong class="low-volume-note"
                >low: ${f.rows} rows, usually ${f.usual_rows} (${f.account})</strong
              >`,
        )}
      </td>`;
    }
    if (day.failed.includes(source)) return html`<td class="failed">failed</td>`;
    if (day.missing.includes(source)) return html`<td class="missing">missing</td>`;
    return html`<td class="muted">—</td>`;
  };
  return page(
    'Coverage',
    principal,
    html`<h1>Coverage ${data.from} to ${data.to}</h1>
      ${dateRangeForm({ action: '/coverage', prefix: 'c', labels: ['From', 'To'], from: data.from, to: data.to })}
      <p class="muted">
        Eastern days. <span class="missing">missing</span>: a business day without a committed load of a
        source the warehouse loads; <span class="failed">failed</span>: only failed loads;
        <span class="low-volume">low</span>: a loaded business day that held far fewer rows than the source
        usually has (the median of the business days before it). Weekends and Canadian bank holidays are
        shaded.
      </p>
      ${scrollBox(
        'Coverage calendar',
        html`<table id="coverage" class="calendar">
          <thead>
            <tr>
              <th scope="col">Day</th>
              ${data.sources.map((s) => html`<th scope="col">${s}</th>`)}
              <th scope="col">Reconcile runs</th>
            </tr>
          </thead>
          <tbody>
            ${[...data.days].reverse().map(
              (d) =>
                html`<tr class="${d.business_day ? '' : 'holiday'}${d.missing.length ? ' has-missing' : ''}">
                  <th scope="row">${d.date}</th>
                  ${data.sources.map((s) => cell(d, s))}
                  <td class="${d.runs.length ? 'ok' : d.business_day ? 'missing' : 'muted'}">
                    ${d.runs.length ? d.runs.map(String).join(', ') : 'none'}
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>`,
      )}`,
    { active: 'coverage' },
  );
}
