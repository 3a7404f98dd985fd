import { createHash } from 'node:crypto';
import { ConfigError } from '../../domain/errors.ts';

/** How a webhook wants its alerts: Slack's incoming-webhook shape (`text` plus `blocks`) or plain JSON. */
export type WebhookFormat = 'slack' | 'json';

/** One entry of RECON_ALERT_WEBHOOKS. `url` is a secret: it goes to fetch and nowhere else. */
export interface Webhook {
  /** 1-based position in the list, which is how messages name it. */
  readonly position: number;
  readonly format: WebhookFormat;
  readonly url: string;
  /** SHA-256, hex, of `format:url`: what alert_deliveries stores instead of the URL. */
  readonly sha256: string;
}

/** How messages name a webhook: its position and the start of its hash, never the URL. */
export function webhookName(w: Webhook): string {
  return `webhook #${w.position} (sha256 ${w.sha256.slice(0, 12)})`;
}

/**
 * Parses RECON_ALERT_WEBHOOKS: entries separated by commas, each `slack:https://…`, `json:https://…`
 * or a bare `https://…` (JSON). http: is accepted too (a receiver on the same host). Throws a
 * ConfigError naming the entry by position, never quoting it (a webhook URL is a secret).
 */
export function parseWebhooks(raw: string | undefined): Webhook[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((entry, i) => {
      const position = i + 1;
      const m = /^(slack|json):(.*)$/i.exec(entry);
      const format = (m ? m[1]!.toLowerCase() : 'json') as WebhookFormat;
      const url = m ? m[2]!.trim() : entry;
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new ConfigError(
          `RECON_ALERT_WEBHOOKS entry #${position} is not a URL: write slack:https://… , json:https://… or https://…`,
        );
      }
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
        throw new ConfigError(
          `RECON_ALERT_WEBHOOKS entry #${position} is not an http(s) URL: write slack:https://… , json:https://… or https://…`,
        );
      }
      const sha256 = createHash('sha256').update(`${format}:${url}`).digest('hex');
      return { position, format, url, sha256 };
    });
}
