import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ReconError } from '../domain/errors.ts';
import { redactPersonal } from '../domain/privacy.ts';

/**
 * The one place where typed errors become Temporal failures, at the activity boundary:
 * - a {@link ReconError} becomes an ApplicationFailure whose type is the error's class name, which
 *   is non-retryable when the error says retrying cannot help (bad credentials, a refused request,
 *   an unreadable file, another environment) and which carries the error's own message;
 * - an error with `retryAfterMs` (RateLimited) asks for exactly that delay before the next attempt;
 * - Temporal failures (cancellation included) pass through unchanged;
 * - anything else is left to the SDK, which retries it with the preset's backoff, its message and
 *   stack redacted of consumers' personal data (a database error can quote a value).
 * No cause or stack of the original is attached: the message is built without secrets, a cause
 * from a library may not be.
 */
export function toTemporalFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure || error instanceof CancelledFailure) return error;
  if (error instanceof ReconError) {
    const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
    return ApplicationFailure.create({
      type: error.name,
      message: error.message,
      nonRetryable: !error.retryable,
      ...(typeof retryAfterMs === 'number' && retryAfterMs >= 0 && error.retryable
        ? { nextRetryDelay: Math.ceil(retryAfterMs) }
        : {}),
    });
  }
  if (error instanceof Error) {
    error.message = redactPersonal(error.message);
    if (error.stack) error.stack = redactPersonal(error.stack);
  }
  return error;
}

/** Wraps an activity so that what it throws goes through {@link toTemporalFailure}. */
export function withFailureMapping<A extends unknown[], R>(
  activity: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await activity(...args);
    } catch (error) {
      throw toTemporalFailure(error);
    }
  };
}
