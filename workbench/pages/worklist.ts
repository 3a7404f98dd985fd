/**
 * The worklist page. The work comes first: a one-line summary per currency, then the items of every
 * currency that has some (the most money at stake first, then the oldest), each list paged both
 * ways with its position. The filter is one line that opens; the totals by account and kind and the
 * bulk actions follow the list. A skip link leads straight to the first item.
 */
import { kindLabel } from '../../reconcile/rules/rules-in-words.ts';
import { DISCREPANCY_KINDS } from '../../reconcile/settings.ts';
import { roleAllows } from '../auth/accounts.ts';
import type { Principal } from '../auth/sessions.ts';
import { filterToQuery, STATUS_FILTERS } from '../../reconcile/discrepancies/filter.ts';
import type { Total } from '../../reconcile/discrepancies/read.ts';
import type { DiscrepancyRow } from '../../reconcile/discrepancies/row.ts';
import type { WorklistScreen, WorklistSection } from '../queries/worklist-screen.ts';
import type { FilterForm, FormField } from './filter-form.ts';
import { html, kindText, money, page, scrollBox, type Html } from './html.ts';

function query(params: Record<string, string>): string {
  const q = new URLSearchParams(params).toString();
  return q ? `?${q}` : '';
}

const count = (n: number) => n.toLocaleString('en-US');

/** One labelled field of the filter form, with its message beside it when it was refused. */
function field(form: FilterForm, name: FormField, label: string, control: (attrs: Html) => Html): Html {
  const error = form.errors[name];
  const attrs = error
    ? html`name="${name}" id="f-${name}" aria-invalid="true" aria-describedby="err-${name}"`
    : html`name="${name}" id="f-${name}"`;
  return html`<div class="field${error ? ' invalid' : ''}">
    <label for="f-${name}">${label}</label>${control(attrs)}${
      error ? html`<span class="field-error" id="err-${name}">${error}</span>` : html``
    }
  </div>`;
}

function options(values: readonly (readonly [string, string])[], selected: string | undefined): Html[] {
  return values.map(
    ([v, label]) =>
      html`<option value="${v}" ${v === (selected ?? '') ? html`selected` : html``}>${label}</option>`,
  );
}

function filterForm(form: FilterForm, users: string[]): Html {
  const v = form.values;
  const active = Object.keys(v).filter((k) => k !== 'status' || v.status !== 'unresolved').length;
  const open = active > 0 || Object.keys(form.errors).length > 0;
  const input = (name: FormField, extra: Html = html``) =>
    field(form, name, LABELS[name], (attrs) => html`<input ${attrs} value="${v[name] ?? ''}" ${extra} />`);
  return html`<details class="filter-box" ${open ? html`open` : html``}>
    <summary id="filters-toggle">Filter${active ? html` (${active} set)` : html``}</summary>
    <form class="filters" method="get" action="/" id="filters" novalidate>
      ${form.errors.form ? html`<p class="field-error" id="err-form" role="alert">${form.errors.form}</p>` : html``}
      ${field(
        form,
        'status',
        'Status',
        (a) =>
          html`<select ${a}>
            ${options(
              STATUS_FILTERS.map((s) => [s, s]),
              v.status ?? 'unresolved',
            )}
          </select>`,
      )}
      ${field(
        form,
        'kind',
        'Kind',
        (a) =>
          html`<select ${a}>
            ${options([['', 'any kind'], ...DISCREPANCY_KINDS.map((k) => [k, kindLabel(k)] as const)], v.kind)}
          </select>`,
      )}
      ${input('account', html`size="12" placeholder="any account" autocapitalize="none"`)}
      ${input('currency', html`size="5" placeholder="CAD" autocapitalize="characters"`)}
      ${input('from', html`type="date"`)} ${input('to', html`type="date"`)}
      ${field(
        form,
        'assignee',
        'Assignee',
        (a) =>
          html`<select ${a}>
            ${options([['', 'anyone'], ['none', 'nobody'], ...users.map((u) => [u, u] as const)], v.assignee)}
          </select>`,
      )}
      ${input('min', html`inputmode="decimal" size="10" placeholder="10.00"`)}
      ${input('q', html`placeholder="transaction or merchant id"`)}
      <div class="form-buttons">
        <button type="submit" id="apply-filters">Apply</button> <a href="/">Clear</a>
      </div>
    </form>
  </details>`;
}

const LABELS: Record<FormField, string> = {
  status: 'Status',
  kind: 'Kind',
  account: 'Account',
  currency: 'Currency',
  from: 'Business date from',
  to: 'to',
  assignee: 'Assignee',
  min: 'At stake at least',
  q: 'Transaction id',
};

function summary(screen: WorklistScreen, q: Record<string, string>): Html {
  if (screen.sections.every((s) => s.count === 0)) return html``;
  return html`<ul class="summary" id="summary" aria-label="Work by currency">
    ${screen.sections.map(
      (s) =>
        html`<li>
          <a href="${s.currency ? `/${query({ ...q, currency: s.currency })}` : `#cur-none`}"
            ><strong>${s.currency ?? 'No currency'}</strong> ${count(s.count)}
            ${s.count === 1 ? 'item' : 'items'}, ${money(s.cents, s.currency)} at stake</a
          >
        </li>`,
    )}
  </ul>`;
}

function row(d: DiscrepancyRow, canAct: boolean): Html {
  return html`<tr data-id="${d.discrepancy_id}">
    <td>
      <a
        href="/discrepancies/${d.discrepancy_id}"
        aria-label="Discrepancy ${d.discrepancy_id}: ${kindLabel(d.kind)}"
        >#${d.discrepancy_id}</a
      >
    </td>
    <td>${kindText(d.kind)}</td>
    <td class="num">${money(d.stake_cents, d.currency)}</td>
    <td>${d.business_date ?? ''}</td>
    <td>
      <span class="status ${d.status}">${d.status}${d.resolution ? html` (${d.resolution})` : html``}</span>
    </td>
    <td class="num">${money(d.expected_amount_cents, d.currency)}</td>
    <td class="num">${money(d.actual_amount_cents, d.currency)}</td>
    <td class="mono">${d.transaction_id ?? ''}</td>
    <td class="mono">${d.merchant_transaction_id ?? ''}</td>
    <td>${d.account}</td>
    <td>${d.assignee ?? ''}</td>
    ${canAct ? html`<td><input type="checkbox" name="ids" value="${d.discrepancy_id}" aria-label="Select #${d.discrepancy_id}" /></td>` : html``}
  </tr>`;
}

function pager(s: WorklistSection, q: Record<string, string>, where: string): Html {
  const last = s.start + s.items.length - 1;
  const position =
    s.items.length === 0 ? html`none` : html`${count(s.start)}–${count(last)} of ${count(s.count)}`;
  const link = (params: Record<string, string> | undefined, rel: string, text: string) =>
    params
      ? html`<a id="${rel}-page${where}" rel="${rel}" href="/${query({ ...q, ...params })}">${text}</a>`
      : html``;
  return html`<nav class="pager" aria-label="Pages of ${s.currency ?? 'no currency'}">
    ${link(s.prev, 'prev', '← Previous')} <span class="position">${position} ${s.currency ?? ''}</span>
    ${link(s.next, 'next', 'Next →')}
    ${s.all ? html`<a href="/${query({ ...q, ...s.all })}">All ${s.currency} items</a>` : html``}
  </nav>`;
}

function section(s: WorklistSection, q: Record<string, string>, canAct: boolean, paged: boolean): Html {
  const key = s.currency ?? 'none';
  const table = html`<table id="worklist-${key}" class="list worklist">
    <caption class="visually-hidden">
      ${s.currency ?? 'No currency'}: most at stake first, then the oldest
    </caption>
    <thead>
      <tr>
        <th scope="col">Id</th>
        <th scope="col">Kind</th>
        <th scope="col" class="num">At stake</th>
        <th scope="col">Business date</th>
        <th scope="col">Status</th>
        <th scope="col" class="num">Expected</th>
        <th scope="col" class="num">Actual</th>
        <th scope="col">Transaction</th>
        <th scope="col">Merchant transaction</th>
        <th scope="col">Account</th>
        <th scope="col">Assignee</th>
        ${canAct ? html`<th scope="col">Select</th>` : html``}
      </tr>
    </thead>
    <tbody>
      ${s.items.map((d) => row(d, canAct))}
    </tbody>
  </table>`;
  return html`<section class="currency" id="cur-${key}" aria-labelledby="h-${key}">
    <h2 id="h-${key}">
      ${s.currency ?? 'No currency'}
      <span class="muted"
        >${count(s.count)} ${s.count === 1 ? 'item' : 'items'}, ${money(s.cents, s.currency)} at stake</span
      >
    </h2>
    ${scrollBox(`${s.currency ?? 'No currency'} worklist`, table, { hasLinks: true })}
    ${pager(s, paged ? q : filterOnly(q), `-${key}`)}
  </section>`;
}

function filterOnly(q: Record<string, string>): Record<string, string> {
  const { currency: _currency, ...rest } = q;
  return rest;
}

function totalsTable(totals: Total[], q: Record<string, string>): Html {
  if (totals.length === 0) return html``;
  const table = html`<table id="totals">
    <thead>
      <tr>
        <th scope="col">Account</th>
        <th scope="col">Kind</th>
        <th scope="col">Currency</th>
        <th scope="col" class="num">Count</th>
        <th scope="col" class="num">At stake</th>
      </tr>
    </thead>
    <tbody>
      ${totals.map(
        (t) =>
          html`<tr>
            <td><a href="/${query({ ...q, account: t.account })}">${t.account}</a></td>
            <td>
              <a
                href="/${query({ ...q, account: t.account, kind: t.kind, ...(t.currency ? { currency: t.currency } : {}) })}"
                >${kindText(t.kind)}</a
              >
            </td>
            <td>${t.currency ?? '—'}</td>
            <td class="num">${count(Number(t.count))}</td>
            <td class="num">${money(t.cents, t.currency)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
  return html`<details class="totals" id="totals-box">
    <summary>Totals by account, kind and currency</summary>
    ${scrollBox('Totals by account, kind and currency', table, { hasLinks: true })}
  </details>`;
}

function bulkForm(users: string[], q: Record<string, string>): Html {
  return html`<form class="bulk" id="bulk-form" data-bulk>
    <strong>With the selected rows</strong>
    <label><input type="checkbox" name="all" id="bulk-all" /> or everything this filter matches</label>
    <label
      >Action
      <select name="action" id="bulk-action">
        <option value="ack">acknowledge</option>
        <option value="assign">assign to</option>
      </select></label
    >
    <label
      >User
      <select name="user" id="bulk-user">
        <option value="">nobody</option>
        ${users.map((u) => html`<option value="${u}">${u}</option>`)}
      </select></label
    >
    <label>Note <input name="note" id="bulk-note" /></label>
    <button type="submit" id="bulk-submit">Apply</button>
    <input type="hidden" name="filter" value="${JSON.stringify(q)}" />
    <span class="error" data-error role="status"></span>
  </form>`;
}

export function worklistPage(
  principal: Principal,
  form: FilterForm,
  screen: WorklistScreen | null,
  users: string[],
): string {
  const canAct = roleAllows(principal.role, 'operator');
  const q = form.filter ? filterToQuery(form.filter) : {};
  const first = screen?.sections.find((s) => s.items.length > 0);
  const work = !screen
    ? html`<p class="field-error" id="filter-refused">
        Nothing is shown until the filter is corrected (above).
      </p>`
    : first
      ? screen.sections.map((s) => section(s, q, canAct, screen.paged))
      : html`<p class="muted" id="no-work">No discrepancy matches this filter.</p>`;
  return page(
    'Worklist',
    principal,
    html`<h1>Worklist</h1>
      ${screen ? summary(screen, q) : html``} ${filterForm(form, users)}
      <div id="work" tabindex="-1">${work}</div>
      ${screen ? totalsTable(screen.totals, q) : html``}
      ${screen && first ? (canAct ? bulkForm(users, q) : html`<p class="muted">Acting on the worklist needs the operator role.</p>`) : html``}
      <p class="muted">
        Each currency on its own, the most money at stake first, then the oldest business date.
        ${form.filter ? html`<a id="export-csv" href="/api/discrepancies.csv${query(q)}">Export this filter as CSV</a>` : html``}
      </p>`,
    { active: 'worklist', skipTo: '#work', skipLabel: 'Skip to the worklist' },
  );
}
