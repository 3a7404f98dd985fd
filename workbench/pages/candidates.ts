/**
 * The discrepancy page's candidates and manual matches (docs/finance.md, Candidates and Manual
 * matches): the near-miss candidates with every check passed or failed in words, a form that matches
 * this item with the ticked candidates or with ids typed in (1:1, 1:N, N:1), and the manual matches of
 * its items with their undo. The form posts to POST /api/matches; undo is DELETE /api/matches/{id}.
 */
import type { Candidate } from '../../reconcile/candidates/read-candidates.ts';
import type { DetailRow } from '../../reconcile/discrepancies/detail.ts';
import type { ManualMatchRow } from '../../reconcile/manual-matches/read.ts';
import { html, money, scrollBox, when, type Html } from './html.ts';

/** The side and id of the discrepancy's own item, for the kinds a manual match can close. */
export function ownItem(d: DetailRow): { side: 'provider' | 'ledger'; id: string } | null {
  if (d.kind === 'missing_at_provider' && d.merchant_transaction_id)
    return { side: 'ledger', id: d.merchant_transaction_id };
  if (
    [
      'missing_in_ledger',
      'amount_mismatch',
      'currency_mismatch',
      'type_mismatch',
      'status_mismatch',
    ].includes(String(d.kind)) &&
    d.transaction_id
  )
    return { side: 'provider', id: d.transaction_id };
  return null;
}

function candidateRow(c: Candidate, canAct: boolean): Html {
  const label = `${c.side === 'provider' ? 'provider transaction' : 'ledger entry'} ${c.id}`;
  return html`<tr data-candidate="${c.id}">
    ${
      canAct
        ? html`<td>
            <input
              type="checkbox"
              class="candidate-pick"
              data-side="${c.side}"
              value="${c.id}"
              aria-label="Match with ${label}"
            />
          </td>`
        : html``
    }
    <td>${c.rank}</td>
    <td>${c.side === 'provider' ? 'provider' : 'ledger'}</td>
    <td class="mono">
      ${c.discrepancy_id === null ? c.id : html`<a href="/discrepancies/${c.discrepancy_id}">${c.id}</a>`}
    </td>
    <td class="num">${money(c.amount_cents, c.currency)}</td>
    <td>${c.business_date}</td>
    <td>
      <ul class="checks">
        ${c.checks.map(
          (k) =>
            html`<li class="${k.passed ? 'passed' : 'failed'}">
              <strong>${k.passed ? 'passed' : 'failed'}</strong> ${k.check.replace('_', ' ')}: ${k.detail}
            </li>`,
        )}
      </ul>
    </td>
    <td class="num">${c.score}</td>
  </tr>`;
}

function candidatesTable(candidates: readonly Candidate[], canAct: boolean): Html {
  if (candidates.length === 0)
    return html`<p class="muted" id="candidates">
      No candidate: nothing on the other side of this account and currency near this item.
    </p>`;
  return scrollBox(
    'Candidates',
    html`<table class="candidates" id="candidates">
      <thead>
        <tr>
          ${canAct ? html`<th scope="col">Pick</th>` : html``}
          <th scope="col">#</th>
          <th scope="col">Side</th>
          <th scope="col">Id</th>
          <th scope="col">Amount</th>
          <th scope="col">Business date</th>
          <th scope="col">Checks</th>
          <th scope="col">Score (order only)</th>
        </tr>
      </thead>
      <tbody>
        ${candidates.map((c) => candidateRow(c, canAct))}
      </tbody>
    </table>`,
  );
}

function matchForm(account: string, own: { side: string; id: string }, mayWriteOff: boolean): Html {
  const provider = own.side === 'provider' ? own.id : '';
  const ledger = own.side === 'ledger' ? own.id : '';
  return html`<form id="match-form" data-match data-account="${account}">
    <label
      >Provider transaction ids
      <input name="provider_transaction_ids" id="match-provider" value="${provider}" required
    /></label>
    <label
      >Ledger merchant transaction ids
      <input name="ledger_merchant_transaction_ids" id="match-ledger" value="${ledger}" required
    /></label>
    <input
      name="note"
      id="match-note"
      aria-label="Why they belong together"
      placeholder="why (required)"
      required
    />
    ${
      mayWriteOff
        ? html`<input
            name="write_off_cents"
            id="match-write-off"
            type="number"
            min="0"
            aria-label="Write off (cents)"
            placeholder="write off (cents)"
          />`
        : html``
    }
    <button id="match">Match</button><span class="error" data-error></span>
    <p class="muted">
      Tick candidates or type ids, separated by commas: one to one, one to many or many to one.
    </p>
  </form>`;
}

function matchLine(m: ManualMatchRow, canAct: boolean): Html {
  const undone = m.undone_at !== null;
  return html`<li class="manual-match ${undone ? 'undone' : 'holds'}" id="match-${m.match_id}">
    Match ${m.match_id}: provider ${m.provider_transaction_ids.join(', ')} ↔ ledger
    ${m.ledger_merchant_transaction_ids.join(', ')}, difference
    ${money(m.difference_cents, m.currency)}${
      m.written_off_cents > 0 ? html`, ${money(m.written_off_cents, m.currency)} written off` : html``
    }
    — by ${m.matched_by} ${when(m.matched_at)}: ${m.note}
    ${
      undone
        ? html`<strong>undone</strong> by ${m.undone_by ?? ''} ${when(m.undone_at)}: ${m.undo_note ?? ''}`
        : canAct
          ? html`<form data-undo="/api/matches/${m.match_id}" id="undo-form-${m.match_id}" class="inline">
              <input
                name="note"
                aria-label="Why undo match ${m.match_id}"
                placeholder="why undo"
                required
              /><button>Undo</button><span class="error" data-error></span>
            </form>`
          : html``
    }
  </li>`;
}

/** The section, or nothing for a discrepancy that no manual match can close and that has no match. */
export function candidatesSection(
  d: DetailRow,
  parts: {
    candidates: readonly Candidate[];
    matches: readonly ManualMatchRow[];
    canAct: boolean;
    mayWriteOff: boolean;
  },
): Html {
  const own = ownItem(d);
  if (!own && parts.matches.length === 0) return html``;
  const open = d.resolved_at === null;
  return html`<section class="matching" id="matching">
    <h2>Candidates and manual matches</h2>
    ${own && open ? candidatesTable(parts.candidates, parts.canAct) : html``}
    ${own && open && parts.canAct ? matchForm(String(d.account), own, parts.mayWriteOff) : html``}
    ${
      parts.matches.length > 0
        ? html`<ul class="manual-matches" id="manual-matches">
            ${parts.matches.map((m) => matchLine(m, parts.canAct))}
          </ul>`
        : html``
    }
  </section>`;
}
