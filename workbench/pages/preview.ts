/**
 * The preview page (docs/finance.md, "The preview page"): a form that proposes tolerances per account
 * and currency (or takes the settings file `recon rules preview` reads), and the page of one preview:
 * running (it reloads itself every few seconds), failed with why, or done: per account, kind and
 * currency what would open, be written off and close, how it agrees with people's decisions, the
 * items, and the Apply button for an admin.
 */
import { roleAllows } from '../auth/accounts.ts';
import type { Principal } from '../auth/sessions.ts';
import type { PreviewJob } from '../preview-jobs.ts';
import type { StoredProposal } from '../../reconcile/tolerances/stored-proposal.ts';
import {
  type Preview,
  PREVIEW_CHANGES,
  type PreviewChange,
  type PreviewTotal,
} from '../../reconcile/tolerances/preview.ts';
import { html, kindText, listTable, money, page, scrollBox, when, type Html } from './html.ts';

/** Rows of the form: enough for a change of a few currencies at once; empty rows are left out. */
const FORM_ROWS = 3;

const WORDS: Record<PreviewChange, string> = {
  open: 'Would open',
  write_off: 'Would be written off',
  close: 'Would close',
  agree: 'Agrees with people',
  disagree: 'Disagrees with people',
};

function proposalRow(i: number, accounts: readonly string[]): Html {
  const number = (name: string, label: string) =>
    html`<label
      >${label} <input type="number" min="0" step="1" name="${name}" id="p${i}-${name}" inputmode="numeric"
    /></label>`;
  return html`<fieldset class="proposal-row filters" id="row-${i}">
    <legend>Account and currency ${i + 1}</legend>
    <label
      >Account
      <select name="account" id="p${i}-account">
        ${accounts.map((a) => html`<option value="${a}">${a}</option>`)}
      </select></label
    >
    <label
      >Currency <input name="currency" id="p${i}-currency" maxlength="3" size="4" placeholder="CAD"
    /></label>
    ${number('amount_tolerance_cents', 'Amount tolerance (cents)')}
    ${number('date_lag_business_days', 'Date lag (business days)')}
    ${number('write_off_limit_cents', 'Write-off limit (cents)')}
  </fieldset>`;
}

export function previewFormPage(principal: Principal, accounts: readonly string[]): string {
  return page(
    'Preview a change of tolerances',
    principal,
    html`<h1>Preview a change of tolerances</h1>
      <p class="muted">
        The preview matches the whole history of each account you name with the proposed figures, in a run
        that is rolled back: nothing changes but the record of the preview. Currencies you do not name keep
        their tolerance. Over a long history it takes minutes: its page says when it is done. Then an admin
        can apply it as the account's next version. See <a href="/tolerances">the tolerances in force</a>.
      </p>
      <form id="preview-form" class="proposal" data-preview>
        ${Array.from({ length: FORM_ROWS }, (_, i) => proposalRow(i, accounts))}
        <label class="block"
          >Or paste a settings file (the JSON <code>recon rules preview --settings</code> reads)
          <textarea name="settings_file" id="settings-file" rows="6"></textarea>
        </label>
        <label class="block"
          >Why (recorded with the proposal) <input name="note" id="preview-note" class="wide"
        /></label>
        <button id="run-preview">Preview over the whole history</button>
        <span class="error" data-error role="alert"></span>
      </form>`,
    { active: 'tolerances' },
  );
}

function countsTable(p: Preview): Html {
  const keys = [
    ...new Map(
      p.totals.map((t) => [`${t.account}\u0000${t.kind}\u0000${t.currency ?? ''}`, t] as const),
    ).values(),
  ];
  const cell = (t: PreviewTotal, c: PreviewChange) => {
    const x = p.totals.find(
      (y) => y.account === t.account && y.kind === t.kind && y.currency === t.currency && y.change === c,
    );
    return x
      ? html`<td class="num" data-change="${c}">
          ${x.count} <span class="muted">(${money(x.cents, x.currency)})</span>
        </td>`
      : html`<td class="num muted" data-change="${c}">0</td>`;
  };
  if (keys.length === 0) return html`<p id="nothing-changes">Nothing would change.</p>`;
  return scrollBox(
    'What would change, per kind and currency',
    listTable(
      'preview-counts',
      ['Account', 'Kind', 'Currency', ...PREVIEW_CHANGES.map((c) => [WORDS[c], 'num'] as const)],
      keys.map(
        (t) =>
          html`<tr data-kind="${t.kind}" data-currency="${t.currency ?? ''}">
            <td>${t.account}</td>
            <td>${kindText(t.kind)}</td>
            <td>${t.currency ?? '—'}</td>
            ${PREVIEW_CHANGES.map((c) => cell(t, c))}
          </tr>`,
      ),
    ),
  );
}

function itemsTable(p: Preview): Html {
  if (p.items.length === 0) return html``;
  return html`<h2>
      The items${p.items.length < p.itemCount ? html`: the first ${p.items.length} of ${p.itemCount}` : ''}
    </h2>
    ${scrollBox(
      'The items, disagreements first',
      listTable(
        'preview-items',
        ['Change', 'Kind', 'Account', 'Business date', 'Transaction', ['Difference', 'num'], 'Resolved as'],
        p.items.map(
          (i) =>
            html`<tr data-change="${i.change}">
              <td>${WORDS[i.change]}</td>
              <td>
                ${
                  i.discrepancy_id === null
                    ? kindText(i.kind)
                    : html`<a href="/discrepancies/${i.discrepancy_id}">${kindText(i.kind)}</a>`
                }
              </td>
              <td>${i.account}</td>
              <td>${i.business_date ?? ''}</td>
              <td class="mono">${i.transaction_id ?? i.merchant_transaction_id ?? ''}</td>
              <td class="num">${money(i.difference_cents, i.currency)}</td>
              <td>${i.resolution ?? ''}</td>
            </tr>`,
        ),
      ),
      { hasLinks: p.items.some((i) => i.discrepancy_id !== null) },
    )}`;
}

function applyPart(principal: Principal, stored: StoredProposal | undefined): Html {
  if (!stored) return html``;
  if (stored.appliedAt !== null)
    return html`<p id="applied">
      Applied by ${stored.appliedBy} at ${when(stored.appliedAt)}: see
      <a href="/tolerances">the tolerances</a>.
    </p>`;
  if (!roleAllows(principal.role, 'admin'))
    return html`<p id="apply-needs-admin">Not applied. Applying it needs an admin.</p>`;
  return html`<form id="apply-form" data-api="/api/tolerances/settings/${stored.settingsId}/apply">
    <button id="apply">Apply settings ${stored.settingsId}</button>
    <span class="error" data-error role="alert"></span>
  </form>`;
}

function doneBody(principal: Principal, p: Preview, stored: StoredProposal | undefined): Html {
  const sum = (c: PreviewChange) => p.totals.filter((t) => t.change === c).reduce((n, t) => n + t.count, 0);
  return html`<p>
      Settings ${p.settingsId}, matched as of ${when(p.asOf)} in ${p.seconds} s. Nothing was written but this
      record.
    </p>
    <ul class="summary" id="preview-accounts">
      ${p.accounts.map(
        (a) =>
          html`<li>
            <strong>${a.account}</strong> ${a.from} to ${a.to}, version ${a.version} now; proposed:
            ${
              a.proposed.length === 0
                ? 'exact'
                : a.proposed
                    .map(
                      (c) =>
                        `${c.currency} tolerance ${c.amountCents} ¢, lag ${c.dateLagBusinessDays}, limit ${c.writeOffLimitCents} ¢`,
                    )
                    .join('; ')
            }
          </li>`,
      )}
    </ul>
    <p id="agreement">
      People's decisions: <strong>${sum('agree')}</strong> agree,
      <strong>${sum('disagree')}</strong> disagree.
    </p>
    ${countsTable(p)} ${applyPart(principal, stored)} ${itemsTable(p)}`;
}

export function previewJobPage(
  principal: Principal,
  job: PreviewJob,
  stored: StoredProposal | undefined,
): string {
  const body =
    job.status === 'running'
      ? html`<p id="preview-running" role="status">
          Running since ${when(job.startedAt)} over the whole history of ${job.accounts.join(', ')}. This page
          reloads itself every few seconds until it is done.
        </p>`
      : job.status === 'failed'
        ? html`<p id="preview-failed" class="error" role="alert">${job.message ?? 'failed'}</p>
            <p><a href="/tolerances/preview">Propose again</a></p>`
        : doneBody(principal, job.preview!, stored);
  return page(
    'Preview of tolerances',
    principal,
    html`<h1>Preview of tolerances</h1>
      <p class="muted">Asked by ${job.by}. JSON: /api/tolerances/previews/${job.id}</p>
      ${body}`,
    // A preview still running: the page asks again by itself (a meta refresh: no script needed).
    { active: 'tolerances', ...(job.status === 'running' ? { refreshSeconds: 2 } : {}) },
  );
}
