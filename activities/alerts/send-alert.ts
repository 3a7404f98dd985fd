import { Context } from '@temporalio/activity';
import { deliverAlert } from '../../reconcile/alerts/deliver.ts';
import { parseWebhooks } from '../../reconcile/alerts/webhooks.ts';
import type { AlertInput, AlertResult } from '../../domain/run-summary.ts';
import type { ActivityDependencies } from '../dependencies.ts';

/**
 * Builds the alert activity: posts a window's run summary or failure to the webhooks of
 * RECON_ALERT_WEBHOOKS (read here, from the worker's config: the workflow passes ids and counts
 * only), skipping webhooks that already had it. Nothing configured: nothing is sent.
 */
export function createSendAlert<Client>(deps: ActivityDependencies<Client>) {
  return async function sendAlert(alert: AlertInput): Promise<AlertResult> {
    const webhooks = parseWebhooks(deps.config.alertWebhooks);
    if (webhooks.length === 0) return { webhooks: 0, delivered: 0, skipped: 0 };
    const ctx = Context.current();
    return deliverAlert(deps.handle.db, alert, {
      webhooks,
      workbenchUrl: deps.config.workbenchUrl,
      attempt: ctx.info.attempt,
      signal: ctx.cancellationSignal,
    });
  };
}
