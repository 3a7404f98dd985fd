import type { ActivityOptions } from '@temporalio/workflow';
import type { ActivityTuning } from './types.ts';

/**
 * Named timeout and retry presets of the activities. Typed errors that cannot succeed on retry are
 * marked non-retryable where they are thrown (activities/failure-mapping.ts); a rate limit sets its
 * own next retry delay. Everything else is retried with backoff.
 */

/**
 * Pull and load one source for one window: a long stream, so the heartbeat (sent on progress and
 * every few seconds) is what tells the server a worker died; a retry then skips a committed load.
 */
export const pullSourceOptions: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '2 minutes',
    maximumAttempts: 8,
  },
};

/** Matching for one window: pure SQL over the warehouse, idempotent, so retried freely. */
export const reconcileWindowOptions: ActivityOptions = {
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
  },
};

/** The retention and the follow-up: five tries, 5 seconds, then doubling up to 5 minutes apart. */
const FIVE_TRIES_UP_TO_FIVE_MINUTES_APART = {
  initialInterval: '5 seconds',
  backoffCoefficient: 2,
  maximumInterval: '5 minutes',
  maximumAttempts: 5,
} as const;

/**
 * Retention after the nightly windows: a few UPDATEs over the warehouse in one transaction,
 * idempotent, so retried freely; heartbeats on a timer while the statements run.
 */
export const clearPersonalDataOptions: ActivityOptions = {
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: FIVE_TRIES_UP_TO_FIVE_MINUTES_APART,
};

/** Bounds of {@link ActivityTuning.heartbeatTimeoutSeconds}: below 1 s a busy worker looks dead. */
export const MIN_HEARTBEAT_TIMEOUT_SECONDS = 1;
export const MAX_HEARTBEAT_TIMEOUT_SECONDS = 3600;

/**
 * What is wrong with `tuning`, or null when it is valid (absent is valid: the presets apply). Pure,
 * so that the workflows can refuse a bad input before scheduling anything.
 */
export function activityTuningProblem(tuning: ActivityTuning | undefined): string | null {
  const seconds = tuning?.heartbeatTimeoutSeconds;
  if (seconds === undefined) return null;
  if (
    !Number.isInteger(seconds) ||
    seconds < MIN_HEARTBEAT_TIMEOUT_SECONDS ||
    seconds > MAX_HEARTBEAT_TIMEOUT_SECONDS
  ) {
    return (
      `activityTuning.heartbeatTimeoutSeconds ${JSON.stringify(seconds)} is not valid: ` +
      `use a whole number of seconds from ${MIN_HEARTBEAT_TIMEOUT_SECONDS} to ${MAX_HEARTBEAT_TIMEOUT_SECONDS}`
    );
  }
  return null;
}

/**
 * A preset with the workflow input's tuning applied: the heartbeat timeout, which is how long the
 * server waits before it retries the activity of a worker that died. The preset itself when the
 * tuning is absent, so production runs schedule exactly what they did before the option existed.
 */
export function tunedActivityOptions(
  preset: ActivityOptions,
  tuning: ActivityTuning | undefined,
): ActivityOptions {
  const seconds = tuning?.heartbeatTimeoutSeconds;
  return seconds === undefined ? preset : { ...preset, heartbeatTimeout: `${seconds} seconds` };
}

/**
 * Posting an alert to the webhooks: a few short requests. Retried with backoff for about 14 minutes
 * (a webhook down for a while still gets the alert); a 4xx other than 429 is non-retryable where it
 * is thrown (reconcile/alerts/deliver.ts), a 429 with Retry-After sets its own delay. Each retry
 * skips the webhooks that already accepted it (alert_deliveries).
 */
export const sendAlertOptions: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 10,
  },
};

/** The worker's list of account names (config only, no I/O beyond the accounts file). */
export const listAccountsOptions: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 5,
  },
};

/**
 * The low-volume check after a nightly run's or a backfill's windows: a few grouped counts over the
 * range and its baseline, then at most one alert. Idempotent, so retried freely, as long as the alert
 * is (a webhook down for a while still gets it; the flags are kept whatever happens).
 */
export const checkVolumeOptions: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 10,
  },
};

/**
 * The nightly follow-up of one account's non-final transactions: up to RECON_FOLLOW_UP_PER_NIGHT
 * status lookups one after another, heartbeating after each. A retry asks only about what was not
 * answered yet (answers of the night are not asked again); a failed lookup is stored, not thrown.
 */
export const followUpOptions: ActivityOptions = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: FIVE_TRIES_UP_TO_FIVE_MINUTES_APART,
};
