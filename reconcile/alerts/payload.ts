import type { AlertInput, RunSummaryAlert, WindowFailureAlert } from '../../domain/run-summary.ts';
import { type LowVolumeAlert, volumeAlertBody, volumeAlertKey } from './volume-payload.ts';
import type { WebhookFormat } from './webhooks.ts';

/**
 * The bodies the alert webhooks receive. Every sum of money is per currency, with its currency
 * beside it; nothing personal (counts, kinds, dates, ids and the failure message only).
 */

/** `12,345.67 CAD`; a null currency (an item without one) is written `(no currency)`. */
export function formatMoney(cents: number, currency: string | null): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}${units}.${String(abs % 100).padStart(2, '0')} ${currency ?? '(no currency)'}`;
}

/**
 * The workbench link of an alert: for a summary, the worklist of the window's business dates
 * filtered to open discrepancies (`/?status=open&from=…&to=…`), where this run's new ones are; for a
 * failure, the runs and coverage page. Null without RECON_WORKBENCH_URL.
 */
export function workbenchLink(base: string | undefined, alert: AlertInput): string | null {
  if (!base) return null;
  const root = base.replace(/\/+$/, '');
  if (alert.type === 'failure') return `${root}/runs`;
  const query = new URLSearchParams({
    status: 'open',
    from: alert.from,
    to: alert.to,
    ...accountField(alert),
  });
  return `${root}/?${query.toString()}`;
}

function origin(alert: AlertInput): string {
  const by = alert.startedBy ?? '';
  if (by.startsWith('backfill-')) return `backfill ${by}`;
  if (by) return `nightly run ${by}`;
  return `window ${alert.workflowId}`;
}

/** ` of account NAME` for an alert of a per-account run; empty otherwise. */
function ofAccount(alert: AlertInput): string {
  return alert.account === undefined ? '' : ` of account ${alert.account}`;
}

/** `{ account }` in a JSON body when the run is per account. */
function accountField(alert: AlertInput): { account?: string } {
  return alert.account === undefined ? {} : { account: alert.account };
}

/** One line a person reads first (Slack's `text`, JSON's `text`). */
export function alertText(alert: AlertInput): string {
  const days = `${alert.from === alert.to ? alert.from : `${alert.from}..${alert.to}`}${ofAccount(alert)}`;
  if (alert.type === 'failure') {
    return `Reconciliation window ${days} FAILED after its retries (${origin(alert)}): ${alert.message}`;
  }
  return (
    `Reconciliation ${days} (${origin(alert)}): ${alert.opened} new, ${alert.reopened} reopened, ` +
    `${alert.resolved} resolved; ${alert.discrepancies.reduce((n, d) => n + d.count, 0)} open in the window`
  );
}

/** The members every alert's JSON starts with, in this order. */
function headOf(type: string, alertId: string, alert: AlertInput) {
  return {
    type,
    alert_id: alertId,
    text: alertText(alert),
    ...accountField(alert),
    from: alert.from,
    to: alert.to,
    workflow_id: alert.workflowId,
    started_by: alert.startedBy,
  };
}

function summaryJson(alert: RunSummaryAlert, link: string | null) {
  return {
    ...headOf('reconcile_run', `summary:${alert.workflowRunId}`, alert),
    reconcile_run_id: alert.reconcileRunId,
    new: alert.opened,
    reopened: alert.reopened,
    resolved: alert.resolved,
    discrepancies: alert.discrepancies.map((d) => ({
      kind: d.kind,
      currency: d.currency,
      count: d.count,
      amount_cents: d.amount_cents,
    })),
    link,
  };
}

function failureJson(alert: WindowFailureAlert, link: string | null) {
  return {
    ...headOf('window_failed', `failure:${alert.workflowRunId}`, alert),
    message: alert.message,
    link,
  };
}

/** Slack mrkdwn escapes: &, < and > (the only characters Slack asks to escape). */
function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function slackBody(alert: AlertInput, link: string | null) {
  const text = alertText(alert);
  const blocks: unknown[] = [];
  if (alert.type === 'summary') {
    blocks.push(
      {
        type: 'header',
        text: { type: 'plain_text', text: `Reconciliation ${alert.from}..${alert.to}${ofAccount(alert)}` },
      },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: `*New*\n${alert.opened}` },
          { type: 'mrkdwn', text: `*Reopened*\n${alert.reopened}` },
          { type: 'mrkdwn', text: `*Resolved*\n${alert.resolved}` },
        ],
      },
    );
    const lines = alert.discrepancies.map(
      (d) => `• ${esc(d.kind)}: ${d.count} — ${formatMoney(d.amount_cents, d.currency)}`,
    );
    blocks.push({
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: lines.length
          ? `*Open in the window, by kind and currency*\n${lines.join('\n')}`
          : '*No open discrepancies in the window*',
      },
    });
  } else {
    blocks.push(
      {
        type: 'header',
        text: { type: 'plain_text', text: `Window ${alert.from}..${alert.to}${ofAccount(alert)} failed` },
      },
      { type: 'section', text: { type: 'mrkdwn', text: esc(alert.message) } },
    );
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: esc(origin(alert)) }] });
  if (link) {
    const label =
      alert.type === 'summary' ? 'Open the new discrepancies in the workbench' : 'Open runs and coverage';
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `<${link}|${label}>` } });
  }
  return { text: link ? `${text} ${link}` : text, blocks };
}

/** The body to POST to a webhook of `format`. */
export function alertBody(
  format: WebhookFormat,
  alert: AlertInput | LowVolumeAlert,
  workbenchUrl: string | undefined,
): unknown {
  if (alert.type === 'volume') return volumeAlertBody(format, alert, workbenchUrl);
  const link = workbenchLink(workbenchUrl, alert);
  if (format === 'slack') return slackBody(alert, link);
  return alert.type === 'summary' ? summaryJson(alert, link) : failureJson(alert, link);
}

/** The key of the deliveries of an alert: one summary and at most one failure per window run. */
export function alertKey(alert: AlertInput | LowVolumeAlert): string {
  if (alert.type === 'volume') return volumeAlertKey(alert);
  return `${alert.type}:${alert.workflowRunId}`;
}
