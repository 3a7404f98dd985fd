/** One discrepancy: the rule in words, the diff, the evidence side by side, the timeline, actions. */
import { roleAllows } from '../auth/accounts.ts';
import type { Principal } from '../auth/sessions.ts';
import { RESOLUTIONS } from '../../reconcile/discrepancies/actions.ts';
import type { DiscrepancyDetail } from '../../reconcile/discrepancies/detail.ts';
import type { Candidate } from '../../reconcile/candidates/read-candidates.ts';
import type { ManualMatchRow } from '../../reconcile/manual-matches/read.ts';
import { candidatesSection } from './candidates.ts';
import { html, kindText, money, page, printable, scrollBox, when, type Html } from './html.ts';

const CENTS_COLUMN = /_cents$/;

/** A table of evidence rows; *_cents columns shown with the row's currency. */
function rowsTable(id: string, rows: Record<string, unknown>[], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted" id="${id}">${empty}</p>`;
  const columns = Object.keys(rows[0]!);
  return scrollBox(
    `Evidence: ${id.replace('ev-', '')}`,
    html`<table class="evidence" id="${id}">
      <thead>
        <tr>
          ${columns.map((c) => html`<th>${c}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            html`<tr>
              ${columns.map((c) => {
                const v = r[c];
                if (CENTS_COLUMN.test(c) && typeof v === 'number') {
                  const currency = (c.startsWith('original_') ? r.original_currency : r.currency) as
                    string | null;
                  return html`<td class="num">${money(v, currency)}</td>`;
                }
                if (c.endsWith('_at') && typeof v === 'string') return html`<td>${when(v)}</td>`;
                return html`<td>
                  ${v === null || v === undefined ? '' : printable(typeof v === 'object' ? JSON.stringify(v) : v, 2000)}
                </td>`;
              })}
            </tr>`,
        )}
      </tbody>
    </table>`,
  );
}

/** A diff value: cents with the currency beside them, the rest as stored. */
function diffValue(field: string, value: unknown, currency: string | null): Html | string {
  if (value === null || value === undefined) return '—';
  if (CENTS_COLUMN.test(field) && typeof value === 'number') return money(value, currency);
  return printable(typeof value === 'object' ? JSON.stringify(value) : value, 2000);
}

function eventLine(e: Record<string, unknown>): Html {
  const d = (e.details ?? {}) as Record<string, unknown>;
  const who = e.actor
    ? String(e.actor)
    : d.run_id !== undefined
      ? `reconcile run ${String(d.run_id)}`
      : 'system';
  const parts: string[] = [];
  if (typeof d.note === 'string' && d.note) parts.push(`note: ${d.note}`);
  if (typeof d.text === 'string') parts.push(d.text);
  if (typeof d.reason === 'string') parts.push(`reason: ${d.reason}`);
  if ('assignee' in d) parts.push(`assignee: ${d.assignee === null ? 'nobody' : String(d.assignee)}`);
  if (typeof d.resolution === 'string' && e.event === 'reopened')
    parts.push(`was resolved as ${d.resolution}`);
  if (d.before && d.after)
    parts.push(`before ${JSON.stringify(d.before)} → after ${JSON.stringify(d.after)}`);
  return html`<li class="event ${String(e.event)}">
    ${when(e.at)} <strong>${String(e.event)}</strong> by
    ${who}${parts.length ? html` — ${parts.join('; ')}` : html``}
  </li>`;
}

/**
 * The note that stands now: the one given with the latest acknowledgement, resolution or reopening
 * (the discrepancy's own note column keeps the acknowledgement's), with what it was given with.
 */
export function currentNote(
  events: readonly Record<string, unknown>[],
): { note: string; event: string; actor: string } | undefined {
  for (const e of [...events].reverse()) {
    const d = (e.details ?? {}) as Record<string, unknown>;
    if (
      ['acknowledged', 'resolved', 'reopened'].includes(String(e.event)) &&
      typeof d.note === 'string' &&
      d.note
    )
      return { note: d.note, event: String(e.event), actor: String(e.actor ?? d.by ?? '') };
  }
  return undefined;
}

export function discrepancyPage(
  principal: Principal,
  detail: DiscrepancyDetail,
  users: string[],
  matching: { candidates: readonly Candidate[]; matches: readonly ManualMatchRow[] } = {
    candidates: [],
    matches: [],
  },
): string {
  const d = detail.discrepancy;
  const canAct = roleAllows(principal.role, 'operator');
  const actions = canAct
    ? actionForms(d, users)
    : html`<p class="muted">Read only: acting needs the operator role.</p>`;
  return page(
    `Discrepancy #${d.id}`,
    principal,
    html`<p><a href="/">← Worklist</a></p>
      <h1>
        #${d.id} ${kindText(d.kind)}
        <span class="status ${String(d.status)}" id="status"
          >${String(d.status)}${d.resolution ? html` (${String(d.resolution)})` : html``}</span
        >
      </h1>
      ${factList(d, currentNote(detail.events))}
      <section class="rule" id="rule">
        <h2>Why</h2>
        <p><strong>${detail.rule.means}</strong></p>
        <p>Rule <code>${detail.rule.rule}</code>: ${detail.rule.compares}</p>
        <p>What to do: ${detail.rule.todo}</p>
      </section>
      ${actions}
      ${candidatesSection(d, { ...matching, canAct, mayWriteOff: roleAllows(principal.role, 'admin') })}
      <section>
        <h2>What disagrees</h2>
        ${scrollBox('What disagrees', diffTable(detail))}
      </section>
      ${evidenceSection(detail.evidence)}
      <section>
        <h2>Timeline</h2>
        <ol class="timeline" id="timeline">
          ${detail.events.map(eventLine)}
        </ol>
      </section>`,
    { active: 'worklist' },
  );
}

type Discrepancy = DiscrepancyDetail['discrepancy'];

/**
 * The form of one action (`action`: its path under the discrepancy's API, and the ids `<action>-form`
 * and `<action>` of the form and its button), its fields first and where its error shows last.
 */
function actionForm(api: string, action: string, button: string, fields: Html): Html {
  return html`<form data-api="${api}/${action}" id="${action}-form">
    ${fields}<button id="${action}">${button}</button><span class="error" data-error></span>
  </form>`;
}

/** A text field of an action form, `<action>-<name>` by id. */
function textField(action: string, name: string, label: string, placeholder: string, required = false): Html {
  return html`<input
    name="${name}"
    id="${action}-${name}"
    aria-label="${label}"
    placeholder="${placeholder}"
    ${required ? html`required` : html``}
  />`;
}

/** The forms of the actions an operator may take: acknowledge, assign, comment, and resolve or reopen. */
function actionForms(d: Discrepancy, users: string[]) {
  const api = `/api/discrepancies/${d.id}`;
  const assignees = html`<select name="user" id="assign-user" aria-label="Assign to">
    <option value="">nobody</option>
    ${users.map((u) => html`<option value="${u}" ${u === d.assignee ? html`selected` : html``}>${u}</option>`)}
  </select>`;
  const reasons = html`<select name="reason" id="resolve-reason" aria-label="Resolution">
    ${RESOLUTIONS.map((r) => html`<option value="${r}">${r}</option>`)}
  </select>`;
  return html`<section class="actions">
    <h2>Act</h2>
    ${actionForm(api, 'ack', 'Acknowledge', textField('ack', 'note', 'Acknowledgement note', 'note', true))}
    ${actionForm(api, 'assign', 'Assign', assignees)}
    ${actionForm(api, 'comment', 'Comment', textField('comment', 'text', 'Comment', 'comment', true))}
    ${
      d.resolved_at !== null
        ? actionForm(api, 'reopen', 'Reopen', textField('reopen', 'note', 'Why reopen', 'why'))
        : actionForm(
            api,
            'resolve',
            'Resolve',
            html`${reasons}${textField('resolve', 'note', 'Resolution note', 'note')}`,
          )
    }
  </section>`;
}

/** Field by field, what the expected side and the actual side hold; the fields that differ marked. */
function diffTable(detail: DiscrepancyDetail) {
  const d = detail.discrepancy;
  return html`<table class="diff" id="diff">
    <thead>
      <tr>
        <th scope="col">Field</th>
        <th scope="col">${detail.diff.expected_side} (expected)</th>
        <th scope="col">${detail.diff.actual_side} (actual)</th>
      </tr>
    </thead>
    <tbody>
      ${detail.diff.fields.map(
        (f) =>
          html`<tr class="${f.differs ? 'differs' : ''}">
            <td>${f.field}</td>
            <td>${diffValue(f.field, f.expected, d.currency)}</td>
            <td>${diffValue(f.field, f.actual, d.currency)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The discrepancy's facts: money, dates, ids, assignee, and its current note. */
function factList(d: Discrepancy, note: ReturnType<typeof currentNote>) {
  return html`<dl class="facts">
    <dt>At stake</dt>
    <dd>${money(d.stake_cents as number, d.currency)}</dd>
    <dt>Expected</dt>
    <dd>${money(d.expected_amount_cents as number | null, d.currency)}</dd>
    <dt>Actual</dt>
    <dd>${money(d.actual_amount_cents as number | null, d.currency)}</dd>
    <dt>Business date</dt>
    <dd>${d.business_date ?? ''}</dd>
    <dt>Transaction</dt>
    <dd class="mono">${d.transaction_id ?? ''}</dd>
    <dt>Merchant transaction</dt>
    <dd class="mono">${d.merchant_transaction_id ?? ''}</dd>
    ${
      d.return_transaction_id
        ? html`<dt>Return</dt>
            <dd class="mono">${d.return_transaction_id}</dd>`
        : html``
    }
    <dt>Assignee</dt>
    <dd id="assignee">${d.assignee ?? 'nobody'}</dd>
    <dt>First seen</dt>
    <dd>${when(d.first_seen_at)}</dd>
    <dt>Last seen</dt>
    <dd>${when(d.last_seen_at)}</dd>
    ${
      note
        ? html`<dt>Note</dt>
            <dd id="note">
              ${note.note}
              <span class="muted">(${note.event}${note.actor ? ` by ${note.actor}` : ''})</span>
            </dd>`
        : html``
    }
  </dl>`;
}

/** Every row of evidence the discrepancy was found on, and the loads that brought them. */
function evidenceSection(ev: DiscrepancyDetail['evidence']) {
  return html`<section class="evidence-grid">
    <h2>Evidence</h2>
    <h3>Provider report rows</h3>
    ${rowsTable('ev-provider', ev.provider, 'No provider transaction.')}
    <h3>Legacy interface row</h3>
    ${rowsTable('ev-legacy', ev.legacy, 'No legacy row.')}
    <h3>Merchant ledger</h3>
    ${rowsTable('ev-ledger', ev.ledger, 'No ledger entry.')}
    <h3>Notifications (every delivery)</h3>
    ${rowsTable('ev-notifications', ev.notifications, 'No notification received.')}
    <h3>Returns and their originals</h3>
    ${rowsTable('ev-returns', ev.returns, 'No return.')}
    <h3>Lineage: loads</h3>
    ${rowsTable('ev-loads', ev.loads, 'No load.')}
  </section>`;
}
