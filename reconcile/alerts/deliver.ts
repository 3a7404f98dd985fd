import type { Db } from '../../db/database.ts';
import { ReconError } from '../../domain/errors.ts';
import type { AlertInput, AlertResult } from '../../domain/run-summary.ts';
import { alertBody, alertKey } from './payload.ts';
import type { LowVolumeAlert } from './volume-payload.ts';
import { type Webhook, webhookName } from './webhooks.ts';

/** A webhook that did not take an alert. Messages name the webhook by position and hash, never its URL. */
export class AlertDeliveryFailed extends ReconError {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  constructor(message: string, retryable: boolean, retryAfterMs?: number) {
    super(message);
    this.retryable = retryable;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

export interface DeliverOptions {
  readonly webhooks: readonly Webhook[];
  readonly workbenchUrl?: string | undefined;
  /** The activity attempt (recorded with the delivery). */
  readonly attempt?: number;
  /** Per request, default 10 s. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

interface Outcome {
  readonly webhook: Webhook;
  readonly error?: AlertDeliveryFailed;
  readonly skipped?: boolean;
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 600) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), 600_000);
}

async function post(webhook: Webhook, body: unknown, options: DeliverOptions): Promise<number> {
  const signals = [AbortSignal.timeout(options.timeoutMs ?? 10_000)];
  if (options.signal) signals.push(options.signal);
  let response: Response;
  try {
    response = await fetch(webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.any(signals),
      redirect: 'error',
    });
  } catch (error) {
    // The cause may quote the URL: only its kind goes into the message.
    const kind = (error as { name?: string }).name === 'TimeoutError' ? 'timed out' : 'could not be reached';
    throw new AlertDeliveryFailed(`${webhookName(webhook)} ${kind}; the alert is retried`, true);
  }
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return response.status;
  const retryable = response.status === 429 || response.status >= 500 || response.status === 408;
  throw new AlertDeliveryFailed(
    retryable
      ? `${webhookName(webhook)} answered HTTP ${response.status}; the alert is retried`
      : `${webhookName(webhook)} refused the alert with HTTP ${response.status}: check that entry of RECON_ALERT_WEBHOOKS`,
    retryable,
    response.status === 429 ? retryAfterMs(response.headers.get('retry-after')) : undefined,
  );
}

/**
 * Posts `alert` to every webhook that has not had it yet (alert_deliveries, keyed by the alert and
 * the webhook's hash) and records each one that accepts it, so that a retry, a second attempt after
 * a worker restart or a replayed call skips what was delivered. Webhooks are tried independently;
 * then, when some failed, throws one AlertDeliveryFailed: retryable when any failure may pass (5xx,
 * 429, network), else not (another 4xx). The narrow window between a webhook's 2xx and the insert
 * is the only way an alert can be posted twice (at-least-once, never silently lost).
 */
export async function deliverAlert(
  db: Db,
  alert: AlertInput | LowVolumeAlert,
  options: DeliverOptions,
): Promise<AlertResult> {
  const key = alertKey(alert);
  const hashes = options.webhooks.map((w) => w.sha256);
  const done = new Set(
    hashes.length === 0
      ? []
      : (
          await db
            .selectFrom('alert_deliveries')
            .select('webhook_sha256')
            .where('alert_key', '=', key)
            .where('webhook_sha256', 'in', hashes)
            .execute()
        ).map((r) => r.webhook_sha256),
  );
  const outcomes: Outcome[] = await Promise.all(
    options.webhooks.map(async (webhook): Promise<Outcome> => {
      if (done.has(webhook.sha256)) return { webhook, skipped: true };
      try {
        const status = await post(webhook, alertBody(webhook.format, alert, options.workbenchUrl), options);
        await db
          .insertInto('alert_deliveries')
          .values({
            alert_key: key,
            webhook_sha256: webhook.sha256,
            kind: alert.type,
            reconcile_run_id: alert.type === 'summary' ? alert.reconcileRunId : null,
            status_code: status,
            attempts: options.attempt ?? 1,
          })
          .onConflict((oc) => oc.doNothing())
          .execute();
        return { webhook };
      } catch (error) {
        if (error instanceof AlertDeliveryFailed) return { webhook, error };
        throw error;
      }
    }),
  );
  const failed = outcomes.filter((o) => o.error);
  if (failed.length > 0) {
    const errors = failed.map((o) => o.error as AlertDeliveryFailed);
    const retryable = errors.some((e) => e.retryable);
    const waits = errors.flatMap((e) => (e.retryAfterMs === undefined ? [] : [e.retryAfterMs]));
    throw new AlertDeliveryFailed(
      `${alert.type} alert ${key}: ${failed.length} of ${outcomes.length} webhooks failed; ` +
        errors.map((e) => e.message).join('; '),
      retryable,
      retryable && waits.length > 0 ? Math.max(...waits) : undefined,
    );
  }
  return {
    webhooks: outcomes.length,
    delivered: outcomes.filter((o) => !o.skipped).length,
    skipped: outcomes.filter((o) => o.skipped).length,
  };
}
