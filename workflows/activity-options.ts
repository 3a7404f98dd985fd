import type { ActivityOptions } from '@temporalio/workflow';

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
