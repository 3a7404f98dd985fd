/**
 * The low-volume alert (docs/operations.md "Low-volume days"): the business days of one account on
 * which a source held nothing or far less than usual, each with the rows it held and the usual
 * figure it was compared with. Counts, dates and names only: nothing personal, no money.
 */
import { createHash } from 'node:crypto';
import type { WebhookFormat } from './webhooks.ts';

/** One flagged day of one source. */
export interface LowVolumeDay {
  readonly source: string;
  readonly day: string;
  readonly rows: number;
  readonly usualRows: number;
  readonly baselineDays: number;
}

export interface LowVolumeAlert {
  readonly type: 'volume';
  readonly account: string;
  /** The range that was checked. */
  readonly from: string;
  readonly to: string;
  /** Flagged days not sent before, by day then source. */
  readonly days: readonly LowVolumeDay[];
  /** The threshold: flagged when rows × 100 < usual × lowPercent. */
  readonly lowPercent: number;
}

/** Days listed in a Slack message; the JSON body lists them all. */
const SLACK_DAYS = 20;

/**
 * The key of the deliveries: the account and the flagged days themselves, so that the same flags are
 * never sent twice, whichever run or retry sends them.
 */
export function volumeAlertKey(alert: LowVolumeAlert): string {
  const days = alert.days.map((d) => `${d.source}/${d.day}`).join(',');
  return `volume:${alert.account}:${createHash('sha256').update(days).digest('hex').slice(0, 32)}`;
}

function dayLine(d: LowVolumeDay): string {
  return `${d.day} ${d.source}: ${d.rows} rows, usually ${d.usualRows} (median of ${d.baselineDays} business days)`;
}

export function volumeAlertText(alert: LowVolumeAlert): string {
  const first = alert.days[0];
  if (alert.days.length === 1 && first) return `Low volume, account ${alert.account}: ${dayLine(first)}`;
  return `Low volume, account ${alert.account}: ${alert.days.length} business days of ${alert.from}..${alert.to} held far fewer rows than usual`;
}

/** The coverage calendar of the checked range; null without RECON_WORKBENCH_URL. */
export function volumeLink(base: string | undefined, alert: LowVolumeAlert): string | null {
  if (!base) return null;
  const query = new URLSearchParams({ from: alert.from, to: alert.to });
  return `${base.replace(/\/+$/, '')}/coverage?${query.toString()}`;
}

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The body to POST for a low-volume alert. */
export function volumeAlertBody(
  format: WebhookFormat,
  alert: LowVolumeAlert,
  workbenchUrl: string | undefined,
) {
  const link = volumeLink(workbenchUrl, alert);
  const text = volumeAlertText(alert);
  if (format === 'json') {
    return {
      type: 'low_volume',
      alert_id: volumeAlertKey(alert),
      text,
      account: alert.account,
      from: alert.from,
      to: alert.to,
      low_percent: alert.lowPercent,
      days: alert.days.map((d) => ({
        date: d.day,
        source: d.source,
        rows: d.rows,
        usual_rows: d.usualRows,
        baseline_days: d.baselineDays,
      })),
      link,
    };
  }
  const shown = alert.days.slice(0, SLACK_DAYS).map((d) => `• ${esc(dayLine(d))}`);
  if (alert.days.length > SLACK_DAYS) shown.push(`… and ${alert.days.length - SLACK_DAYS} more`);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: `Low volume, account ${alert.account}` } },
    { type: 'section', text: { type: 'mrkdwn', text: shown.join('\n') } },
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `Flagged below ${alert.lowPercent}% of the usual rows; check the provider's answer for these days before signing them off.`,
        },
      ],
    },
  ];
  if (link)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `<${link}|Open the coverage calendar>` } });
  return { text: link ? `${text} ${link}` : text, blocks };
}
