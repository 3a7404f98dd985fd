/**
 * The low-volume check as the nightly run and a backfill call it (activities/reconcile/check-volume.ts):
 * flag the account's low days of the range (flag-low-volume.ts), then send the open flags not sent
 * before to the alert webhooks in one alert, and mark them sent. A retry after a failed delivery
 * flags the same days again and sends the same alert (same key), skipping the webhooks that took it.
 */
import { sql, type Kysely } from 'kysely';
import type { VolumeSettings } from '../../config/volume.ts';
import type { Database } from '../../db/database.ts';
import { deliverAlert, type DeliverOptions } from '../alerts/deliver.ts';
import type { LowVolumeAlert } from '../alerts/volume-payload.ts';
import type { VolumeCheckResult } from '../../domain/run-summary.ts';
import { flagLowVolume, type VolumeFlag } from './flag-low-volume.ts';

/** Flags listed in a result (a workflow history keeps it): `flagged` says how many there are. */
export const LISTED_FLAGS = 50;

export type { VolumeCheckResult };

export interface VolumeCheckOptions {
  readonly settings: VolumeSettings;
  /** Where to send the alert; absent or without webhooks: nothing is sent and flags stay unsent. */
  readonly alerts?: DeliverOptions;
}

async function markAlerted(db: Kysely<Database>, account: string, flags: readonly VolumeFlag[]) {
  await sql`update volume_flags set alerted_at = now()
    from unnest(${flags.map((f) => f.source)}::text[], ${flags.map((f) => f.day)}::date[]) as v(source, day)
    where account = ${account} and volume_flags.source = v.source and business_date = v.day
      and alerted_at is null and cleared_at is null`.execute(db);
}

/**
 * Checks `account`'s business days `from`..`to` for low volume, records the flags and alerts on the
 * new ones. Idempotent; throws AlertDeliveryFailed (retryable or not) when a webhook refused the
 * alert, after the flags are recorded.
 */
export async function checkVolume(
  db: Kysely<Database>,
  req: { account: string; from: string; to: string },
  options: VolumeCheckOptions,
): Promise<VolumeCheckResult> {
  const outcome = await flagLowVolume(db, req, options.settings);
  const unsent = outcome.flags.filter((f) => !f.alerted);
  let alerted = 0;
  if (unsent.length > 0 && options.alerts && options.alerts.webhooks.length > 0) {
    const alert: LowVolumeAlert = {
      type: 'volume',
      account: req.account,
      from: req.from,
      to: req.to,
      lowPercent: options.settings.lowPercent,
      days: unsent.map(({ source, day, rows, usualRows, baselineDays }) => ({
        source,
        day,
        rows,
        usualRows,
        baselineDays,
      })),
    };
    await deliverAlert(db, alert, options.alerts);
    await markAlerted(db, req.account, unsent);
    alerted = unsent.length;
  }
  return {
    ...req,
    judged: outcome.judged,
    flagged: outcome.flags.length,
    flags: outcome.flags.slice(0, LISTED_FLAGS).map(({ source, day, rows, usualRows, baselineDays }) => ({
      source,
      day,
      rows,
      usualRows,
      baselineDays,
    })),
    alerted,
  };
}
