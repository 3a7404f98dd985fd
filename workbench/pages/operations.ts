/** Runs and loads, the coverage calendar, and the sign-in page. */
import type { Principal } from '../auth/sessions.ts';
import type { CoverageDay } from '../queries/operations.ts';
import type { ScheduleState } from '../queries/schedule.ts';
import { html, page } from './html.ts';

/** What a page answers when its address asks for something it cannot show: why, and the way back. */
export function errorPage(principal: Principal | null, message: string, back: string): string {
  return page(
    'Cannot show this page',
    principal,
    html`<h1>Cannot show this page</h1>
      <p class="error" role="alert">${message}</p>
      <p><a href="${back}">Start again from ${back}</a></p>`,
  );
}

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
    ${s.note ? html`<p>${s.note}</p>` : html``}
    <p>Next: ${(s.next ?? []).join(', ') || 'none'}</p>
    <ul>
      ${(s.recent ?? []).map(
        (r) =>
          html`<li>
            ${r.scheduled_at}: <code>${r.workflow_id}</code>
            <span class="${r.status === 'COMPLETED' ? '' : 'bad'}">${r.status}</span>
          </li>`,
      )}
    </ul>
  </section>`;
}

export function runsPage(
  principal: Principal,
  runs: Record<string, unknown>[],
  loads: Record<string, unknown>[],
  schedule: ScheduleState,
): string {
  const summaryText = (s: unknown) => {
    const o = (s ?? {}) as Record<string, unknown>;
    const lifecycle = (o.lifecycle ?? o.discrepancies ?? null) as unknown;
    return lifecycle ? JSON.stringify(lifecycle) : '';
  };
  return page(
    'Runs and loads',
    principal,
    html`${schedulePanel(schedule)}
      <h1>Reconcile runs</h1>
      <table id="runs" class="list">
        <thead>
          <tr>
            <th>Run</th>
            <th>Business dates</th>
            <th>As of</th>
            <th>Started</th>
            <th>Finished</th>
            <th>Lifecycle</th>
          </tr>
        </thead>
        <tbody>
          ${runs.map(
            (r) =>
              html`<tr>
                <td>${r.run_id}</td>
                <td>${r.range_from} … ${r.range_to}</td>
                <td>${r.as_of}</td>
                <td>${r.started_at}</td>
                <td>${r.finished_at ?? html`<span class="bad">not finished</span>`}</td>
                <td class="mono small">${summaryText(r.summary)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h1>Loads</h1>
      <table id="loads" class="list">
        <thead>
          <tr>
            <th>Load</th>
            <th>Source</th>
            <th>Origin</th>
            <th>File or window</th>
            <th>Status</th>
            <th class="num">Read</th>
            <th class="num">Loaded</th>
            <th class="num">Rejected</th>
            <th>Started</th>
            <th>Finished</th>
          </tr>
        </thead>
        <tbody>
          ${loads.map(
            (l) =>
              html`<tr class="${l.status === 'failed' ? 'failed' : ''}">
                <td>${l.load_id}</td>
                <td>${l.source}</td>
                <td>${l.origin}</td>
                <td>
                  ${
                    l.file_name ??
                    (l.window_start ? `${String(l.window_start)} … ${String(l.window_end)}` : '')
                  }
                </td>
                <td>${l.status}${l.error ? html` <span class="bad">${String(l.error)}</span>` : html``}</td>
                <td class="num">${l.rows_read}</td>
                <td class="num">${l.rows_loaded}</td>
                <td class="num">${l.rows_rejected}</td>
                <td>${l.started_at}</td>
                <td>${l.finished_at ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
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
        title="load ${last.load_id}, ${last.rows_loaded} rows, finished ${last.finished_at ?? ''}"
      >
        load ${last.load_id}<br /><small>${String(last.finished_at ?? '').slice(0, 16)}</small>
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
    html`<h1>Coverage ${data.from} … ${data.to}</h1>
      <form method="get" action="/coverage" class="filters">
        <label>From <input type="date" name="from" value="${data.from}" /></label>
        <label>To <input type="date" name="to" value="${data.to}" /></label><button>Show</button>
      </form>
      <p class="muted">
        Eastern days. <span class="missing">missing</span>: a business day without a committed load of a
        source the warehouse loads; <span class="failed">failed</span>: only failed loads;
        <span class="low-volume">low</span>: a loaded business day that held far fewer rows than the source
        usually has (the median of the business days before it). Weekends and Canadian bank holidays are
        shaded.
      </p>
      <table id="coverage" class="calendar">
        <thead>
          <tr>
            <th>Day</th>
            ${data.sources.map((s) => html`<th>${s}</th>`)}
            <th>Reconcile runs</th>
          </tr>
        </thead>
        <tbody>
          ${[...data.days].reverse().map(
            (d) =>
              html`<tr class="${d.business_day ? '' : 'holiday'}${d.missing.length ? ' has-missing' : ''}">
                <th>${d.date}</th>
                ${data.sources.map((s) => cell(d, s))}
                <td class="${d.runs.length ? 'ok' : d.business_day ? 'missing' : 'muted'}">
                  ${d.runs.length ? d.runs.map(String).join(', ') : 'none'}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    { active: 'coverage' },
  );
}
