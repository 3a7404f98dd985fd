import { createActivities, type Activities } from '../activities/index.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Config } from '../config/config.ts';
import type { ReconMetrics } from '../observability/metrics.ts';
import { createProviderClient } from '../provider/client/index.ts';
import { pullSource } from '../ingest/pull-source.ts';
import { parseWebhooks } from '../reconcile/alerts/webhooks.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';

/**
 * The activities of the product: the real provider client (from the RECON_* settings), the real
 * pull (HTTP stream → parser → loader) and the real matching. `close` releases the client; the
 * database handle stays the caller's. A malformed RECON_ALERT_WEBHOOKS is refused here, when the
 * worker starts, rather than by the first alert.
 */
export function openProductionActivities(
  config: Config,
  handle: DatabaseHandle,
  options: { metrics?: ReconMetrics } = {},
): { activities: Activities; close(): Promise<void> } {
  parseWebhooks(config.alertWebhooks);
  const provider = createProviderClient(config);
  const activities = createActivities({
    handle,
    provider,
    config,
    pullSource,
    reconcileRange,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return { activities, close: async () => provider.close() };
}
