import { ReconError } from '../../domain/errors.ts';

/**
 * Typed errors of the provider client. Messages say what failed, at which endpoint, and what to do;
 * they never contain request bodies, headers, tokens or credentials.
 */

/** No usable answer (network error, timeout, 5xx) after the client's own attempts: retry later. */
export class ProviderUnavailable extends ReconError {
  readonly retryable = true;
  readonly status: number | null;
  readonly attempts: number;
  constructor(message: string, status: number | null, attempts: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
    this.attempts = attempts;
  }
}

/** HTTP 429: the provider asks us to wait `retryAfterMs` before the next call. */
export class RateLimited extends ReconError {
  readonly retryable = true;
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/** The provider refused the request as invalid (400, 403, 404...): retrying the same call cannot help. */
export class ProviderRejectedRequest extends ReconError {
  readonly retryable = false;
  readonly status: number;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
  constructor(message: string, status: number, errorCode: string | null, errorMessage: string | null) {
    super(message);
    this.status = status;
    this.errorCode = errorCode;
    this.errorMessage = errorMessage;
  }
}

/** The credentials were refused (token endpoint, 401 after a fresh token, legacy credentials). */
export class ProviderAuthFailed extends ReconError {
  readonly retryable = false;
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** A legacy query that breaks a documented limit (spec 4.6 / 8); refused before anything is sent. */
export class LegacyQueryRefused extends ReconError {
  readonly retryable = false;
  readonly limit: string;
  constructor(limit: string, detail: string) {
    super(`legacy query refused before sending: ${detail}`);
    this.limit = limit;
  }
}

/** The response body stopped before its end (connection cut, timeout): the whole fetch may be retried. */
export class ProviderStreamBroken extends ReconError {
  readonly retryable = true;
  readonly bytesReceived: number;
  constructor(message: string, bytesReceived: number, options?: ErrorOptions) {
    super(message, options);
    this.bytesReceived = bytesReceived;
  }
}
