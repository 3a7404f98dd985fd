import { Context } from '@temporalio/activity';
import { DEFAULT_ACCOUNT } from '../../domain/account-name.ts';
import { DEFAULT_VOLUME_SETTINGS } from '../../config/volume.ts';
import { parseWebhooks } from '../../reconcile/alerts/webhooks.ts';
import { checkVolume, type VolumeCheckResult } from '../../reconcile/volume/check-volume.ts';
import type { VolumeCheckInput } from '../../domain/run-summary.ts';
import type { ActivityDependencies } from '../dependencies.ts';
import { whileHeartbeating } from '../heartbeat-interval.ts';

/**
 * Builds the low-volume activity of the nightly run and of a backfill's end: flags the account's
 * business days of the range that held far fewer rows than usual (RECON_VOLUME_*, the worker's
 * config) and alerts the webhooks of RECON_ALERT_WEBHOOKS on the new flags. Idempotent, so a retry
 * runs it again; only counts and the first flags go back into the workflow history.
 */
export function createCheckVolume<Client>(deps: ActivityDependencies<Client>) {
  return async function checkVolumeActivity(input: VolumeCheckInput): Promise<VolumeCheckResult> {
    const ctx = Context.current();
    return whileHeartbeating(deps.heartbeatEverySeconds, () =>
      checkVolume(
        deps.handle.db,
        { account: input.account ?? DEFAULT_ACCOUNT, from: input.from, to: input.to },
        {
          settings: deps.config.volume ?? DEFAULT_VOLUME_SETTINGS,
          alerts: {
            webhooks: parseWebhooks(deps.config.alertWebhooks),
            workbenchUrl: deps.config.workbenchUrl,
            attempt: ctx.info.attempt,
            signal: ctx.cancellationSignal,
          },
        },
      ),
    );
  };
}
