/** The worklist page: filters, totals by account, kind and currency, the items, bulk actions, CSV export. */
import type { Principal } from '../auth/sessions.ts';
import { roleAllows } from '../auth/accounts.ts';
import type { DiscrepancyRow } from '../../reconcile/discrepancies/row.ts';
import {
  filterToQuery,
  STATUS_FILTERS,
  type DiscrepancyFilter,
  type StatusFilter,
} from '../../reconcile/discrepancies/filter.ts';
import type { Total } from '../../reconcile/discrepancies/read.ts';
import { DISCREPANCY_KINDS } from '../../reconcile/settings.ts';
import { html, money, page } from './html.ts';

function query(params: Record<string, string>): string {
  const q = new URLSearchParams(params).toString();
  return q ? `?${q}` : '';
}

export function worklistPage(
  principal: Principal,
  filter: DiscrepancyFilter & { status: StatusFilter },
  data: { items: DiscrepancyRow[]; next_cursor: string | null; totals: Total[] | null },
  users: string[],
): string {
  const canAct = roleAllows(principal.role, 'operator');
  const q = filterToQuery(filter);
  const select = (name: string, options: readonly string[], value: string | undefined, any: string) =>
    html`<select name="${name}" id="f-${name}">
      <option value="">${any}</option>
      ${options.map((o) => html`<option value="${o}" ${o === value ? html`selected` : html``}>${o}</option>`)}
    </select>`;
  const filters = html`<form class="filters" method="get" action="/" id="filters">
    <label
      >Status
      <select name="status" id="f-status">
        ${STATUS_FILTERS.map(
          (s) => html`<option value="${s}" ${s === filter.status ? html`selected` : html``}>${s}</option>`,
        )}
      </select></label
    >
    <label>Kind ${select('kind', DISCREPANCY_KINDS, filter.kinds?.[0], 'any kind')}</label>
    <label
      >Account
      <input
        name="account"
        id="f-account"
        size="12"
        value="${filter.account ?? ''}"
        placeholder="any account"
    /></label>
    <label
      >Currency
      <input name="currency" id="f-currency" size="4" value="${filter.currency ?? ''}" placeholder="CAD"
    /></label>
    <label>From <input type="date" name="from" id="f-from" value="${filter.from ?? ''}" /></label>
    <label>To <input type="date" name="to" id="f-to" value="${filter.to ?? ''}" /></label>
    <label>Assignee ${select('assignee', ['none', ...users], filter.assignee, 'anyone')}</label>
    <label
      >Min at stake (cents)
      <input name="min_cents" id="f-min" inputmode="numeric" size="8" value="${filter.minCents ?? ''}"
    /></label>
    <label
      >Transaction id
      <input name="q" id="f-q" value="${filter.q ?? ''}" placeholder="transaction or merchant id"
    /></label>
    <button type="submit" id="apply-filters">Apply</button>
    <a href="/">Clear</a>
  </form>`;

  const totals = data.totals
    ? html`<section class="totals">
        <h2>Totals for this filter</h2>
        ${
          data.totals.length === 0
            ? html`<p class="muted">Nothing matches.</p>`
            : html`<table id="totals">
                <thead>
                  <tr>
                    <th>Account</th>
                    <th>Kind</th>
                    <th>Currency</th>
                    <th class="num">Count</th>
                    <th class="num">At stake</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.totals.map(
                    (t) =>
                      html`<tr>
                        <td>
                          <a href="/${query({ ...q, account: t.account })}">${t.account}</a>
                        </td>
                        <td>
                          <a
                            href="/${query({ ...q, account: t.account, kind: t.kind, ...(t.currency ? { currency: t.currency } : {}) })}"
                            >${t.kind}</a
                          >
                        </td>
                        <td>${t.currency ?? '—'}</td>
                        <td class="num">${t.count}</td>
                        <td class="num">${money(t.cents, t.currency)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>`
    : html``;

  const bulk = canAct
    ? html`<form class="bulk" id="bulk-form" data-bulk>
        <strong>With the selected rows</strong> (or
        <label><input type="checkbox" name="all" id="bulk-all" /> everything this filter matches</label>):
        <select name="action" id="bulk-action">
          <option value="ack">acknowledge</option>
          <option value="assign">assign to</option>
        </select>
        <select name="user" id="bulk-user">
          <option value="">nobody</option>
          ${users.map((u) => html`<option value="${u}">${u}</option>`)}
        </select>
        <input name="note" id="bulk-note" placeholder="note" />
        <button type="submit" id="bulk-submit">Apply</button>
        <input type="hidden" name="filter" value="${JSON.stringify(q)}" />
        <span class="error" data-error></span>
      </form>`
    : html`<p class="muted">You can read the worklist; acting on it needs the operator role.</p>`;

  const rows = data.items.map(
    (d) =>
      html`<tr data-id="${d.discrepancy_id}">
        ${canAct ? html`<td><input type="checkbox" name="ids" value="${d.discrepancy_id}" aria-label="select ${d.discrepancy_id}" /></td>` : html``}
        <td><a href="/discrepancies/${d.discrepancy_id}">#${d.discrepancy_id}</a></td>
        <td>${d.account}</td>
        <td>${d.kind}</td>
        <td>
          <span class="status ${d.status}"
            >${d.status}${d.resolution ? html` (${d.resolution})` : html``}</span
          >
        </td>
        <td>${d.business_date ?? ''}</td>
        <td class="num">${money(d.stake_cents, d.currency)}</td>
        <td class="num">${money(d.expected_amount_cents, d.currency)}</td>
        <td class="num">${money(d.actual_amount_cents, d.currency)}</td>
        <td class="mono">${d.transaction_id ?? ''}</td>
        <td class="mono">${d.merchant_transaction_id ?? ''}</td>
        <td>${d.assignee ?? ''}</td>
      </tr>`,
  );
  const list = html`<table id="worklist" class="list">
      <thead>
        <tr>
          ${canAct ? html`<th></th>` : html``}
          <th>Id</th>
          <th>Account</th>
          <th>Kind</th>
          <th>Status</th>
          <th>Business date</th>
          <th class="num">At stake</th>
          <th class="num">Expected</th>
          <th class="num">Actual</th>
          <th>Transaction</th>
          <th>Merchant transaction</th>
          <th>Assignee</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
    ${data.items.length === 0 ? html`<p class="muted">No discrepancy matches this filter.</p>` : html``}
    <p class="pager">
      ${data.next_cursor ? html`<a id="next-page" href="/${query({ ...q, cursor: data.next_cursor })}">Next page →</a>` : html``}
    </p>`;

  return page(
    'Worklist',
    principal,
    html`<h1>Worklist</h1>
      <p class="muted">
        Per currency, the most money at stake first, then the oldest business date.
        <a id="export-csv" href="/api/discrepancies.csv${query(q)}">Export this filter as CSV</a>
      </p>
      ${filters}${totals}${bulk}${list}`,
    { active: 'worklist' },
  );
}
