import { clearPersonalData } from '../../db/retention.ts';
import type { RetentionResult } from '../../domain/run-summary.ts';
import type { ActivityDependencies } from '../dependencies.ts';
import { whileHeartbeating } from '../heartbeat-interval.ts';

/**
 * Builds the retention activity of the nightly run: clears consumers' personal data from raw lines,
 * payloads and history older than RECON_RAW_RETENTION_DAYS (the worker's config), or does nothing
 * when the setting is unset. Idempotent, so a retry simply runs it again. Only the cutoff and counts
 * go back into the workflow history.
 */
export function createClearPersonalData<Client>(deps: ActivityDependencies<Client>) {
  return async function clearPersonalDataActivity(): Promise<RetentionResult | null> {
    const days = deps.config.rawRetentionDays;
    if (days === undefined) return null;
    const summary = await whileHeartbeating(deps.heartbeatEverySeconds, () =>
      clearPersonalData(deps.handle.db, { olderThanDays: days }),
    );
    return { olderThanDays: days, cutoff: summary.cutoff, cleared: summary.cleared };
  };
}
