/**
 * The tolerances page (per account and currency: the version in force and every version, with who,
 * when and why) and the write-offs page (one Eastern month: totals per currency, never added across
 * currencies, then every write-off, with the CSV the CLI writes). docs/finance.md, "Tolerances and
 * write-offs".
 */
import { roleAllows } from '../auth/accounts.ts';
import type { Principal } from '../auth/sessions.ts';
import type { AccountTolerances } from '../queries/tolerances.ts';
import type { WriteOffReport } from '../../reconcile/tolerances/write-off-report.ts';
import { html, listTable, money, page, scrollBox, when } from './html.ts';

const cents = (n: number) => html`${n} ¢`;

function currentTable(a: AccountTolerances) {
  if (a.currencies.length === 0)
    return html`<p class="muted">No tolerance: every currency of ${a.account} matches exactly.</p>`;
  return scrollBox(
    `Tolerances of ${a.account} in force`,
    listTable(
      `current-${a.account}`,
      [
        'Currency',
        ['Amount tolerance', 'num'],
        ['Date lag (business days)', 'num'],
        ['Write-off limit', 'num'],
      ],
      a.currencies.map(
        (c) =>
          html`<tr>
            <td>${c.currency}</td>
            <td class="num">${cents(c.amountCents)}</td>
            <td class="num">${c.dateLagBusinessDays}</td>
            <td class="num">${c.writeOffLimitCents === 0 ? 'none' : cents(c.writeOffLimitCents)}</td>
          </tr>`,
      ),
    ),
  );
}

function historyTable(a: AccountTolerances) {
  if (a.history.length === 0) return html``;
  return html`<details class="numbers">
    <summary>
      Every version of ${a.account} (${a.history.length} row${a.history.length === 1 ? '' : 's'})
    </summary>
    ${scrollBox(
      `Tolerance versions of ${a.account}`,
      listTable(
        `history-${a.account}`,
        [
          ['Version', 'num'],
          'Currency',
          ['Tolerance', 'num'],
          ['Lag', 'num'],
          ['Limit', 'num'],
          'Set by',
          'When',
          'Note',
          ['Settings', 'num'],
        ],
        a.history.map(
          (h) =>
            html`<tr>
              <td class="num">${h.version}</td>
              <td>${h.currency}</td>
              <td class="num">${cents(h.amount_tolerance_cents)}</td>
              <td class="num">${h.date_lag_business_days}</td>
              <td class="num">${cents(h.write_off_limit_cents)}</td>
              <td>${h.set_by}</td>
              <td>${when(h.set_at)}</td>
              <td class="words">${h.note ?? ''}</td>
              <td class="num">${h.settings_id ?? ''}</td>
            </tr>`,
        ),
      ),
    )}
  </details>`;
}

export function tolerancesPage(principal: Principal, accounts: readonly AccountTolerances[]): string {
  const propose = roleAllows(principal.role, 'operator')
    ? html`<p>
        <a id="propose" href="/tolerances/preview">Propose a change and preview it</a>${
          roleAllows(principal.role, 'admin') ? '' : ' (applying it needs an admin)'
        }
      </p>`
    : html``;
  return page(
    'Tolerances',
    principal,
    html`<h1>Tolerances</h1>
      <p class="muted">
        Per account and currency: a difference of at most the amount tolerance is equal; one beyond it and
        within the write-off limit is written off by the run; the date lag gives the other side more business
        days to show up. A change is previewed over the whole history, then applied as the account's next
        version. JSON: /api/tolerances.
      </p>
      ${propose} ${accounts.length === 0 ? html`<p>No account yet.</p>` : html``}
      ${accounts.map(
        (a) =>
          html`<section class="account" id="account-${a.account}">
            <h2>${a.account} <span class="muted">version ${a.version}</span></h2>
            ${currentTable(a)} ${historyTable(a)}
          </section>`,
      )}`,
    { active: 'tolerances' },
  );
}

function totalsList(report: WriteOffReport) {
  return html`<ul class="summary" id="write-off-totals">
    ${report.totals.map(
      (t) =>
        html`<li>
          <strong>${t.currency}</strong> ${money(t.net_cents, t.currency)} net in ${t.count}
          write-off${t.count === 1 ? '' : 's'}${t.reversals ? html`, ${t.reversals} of them reversals` : ''}
        </li>`,
    )}
  </ul>`;
}

function linesTable(report: WriteOffReport) {
  return scrollBox(
    'Write-offs',
    listTable(
      'write-offs',
      ['When', 'Account', ['Amount', 'num'], 'What', 'Transaction', 'Reason', 'By'],
      report.lines.map(
        (l) =>
          html`<tr>
            <td>${when(l.written_off_at)}</td>
            <td>${l.account}</td>
            <td class="num">${money(l.amount_cents, l.currency)}</td>
            <td>
              ${
                l.discrepancy_id !== null
                  ? html`<a href="/discrepancies/${l.discrepancy_id}">${l.kind ?? 'discrepancy'}</a>`
                  : l.manual_match_id !== null
                    ? `manual match ${l.manual_match_id}`
                    : (l.kind ?? '')
              }${l.reversal_of !== null ? ` (reverses ${l.reversal_of})` : ''}
            </td>
            <td class="mono">${l.transaction_id ?? l.merchant_transaction_id ?? ''}</td>
            <td class="words">${l.reason}</td>
            <td>${l.written_off_by}</td>
          </tr>`,
      ),
    ),
    { hasLinks: report.lines.some((l) => l.discrepancy_id !== null) },
  );
}

export function writeOffsPage(principal: Principal, report: WriteOffReport): string {
  const query = new URLSearchParams({
    month: report.month,
    ...(report.account ? { account: report.account } : {}),
  }).toString();
  return page(
    `Write-offs ${report.month}`,
    principal,
    html`<h1>Write-offs ${report.month}</h1>
      <form method="get" action="/write-offs" class="filters">
        <label>Month <input type="month" name="month" id="w-month" value="${report.month}" /></label>
        <label>Account <input name="account" value="${report.account ?? ''}" placeholder="all" /></label>
        <button>Show</button>
      </form>
      <p class="muted">
        The Eastern month in which each amount was written off. Totals are per currency, reversals included,
        never added across currencies. <a id="write-offs-csv" href="/api/write-offs.csv?${query}">CSV</a> (the
        same file as <code>recon write-offs --csv</code>) · JSON: /api/write-offs?${query}
      </p>
      ${
        report.lines.length === 0
          ? html`<p id="no-write-offs">No write-off in ${report.month}.</p>`
          : html`${totalsList(report)} ${linesTable(report)}`
      }`,
    { active: 'write-offs' },
  );
}
