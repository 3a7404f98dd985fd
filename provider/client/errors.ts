import { typedError } from '../../domain/errors.ts';

/**
 * Typed errors of the provider client. Messages say what failed, at which endpoint, and what to do;
 * they never contain request bodies, headers, tokens or credentials.
 */

/** No usable answer (network error, timeout, 5xx) after the client's own attempts: retry later. */
export class ProviderUnavailable extends typedError<{
  readonly status: number | null;
  readonly attempts: number;
}>('retryable') {}

/** HTTP 429: the provider asks us to wait `retryAfterMs` before the next call. */
export class RateLimited extends typedError<{ readonly retryAfterMs: number }>('retryable') {}

/** The provider refused the request as invalid (400, 403, 404...): retrying the same call cannot help. */
export class ProviderRejectedRequest extends typedError<{
  readonly status: number;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
}>('final') {}

/** The credentials were refused (token endpoint, 401 after a fresh token, legacy credentials). */
export class ProviderAuthFailed extends typedError<{ readonly status: number }>('final') {}

/** A legacy query that breaks a documented limit (docs/provider-interface.md 2.3 / 5); refused before anything is sent. */
export class LegacyQueryRefused extends typedError<{ readonly limit: string }>('final') {
  constructor(limit: string, detail: string) {
    super(`legacy query refused before sending: ${detail}`, { limit });
  }
}

/** The response body stopped before its end (connection cut, timeout): the whole fetch may be retried. */
export class ProviderStreamBroken extends typedError<{ readonly bytesReceived: number }>('retryable') {}

/**
 * The provider answered (HTTP 200, body complete) with something that is not the report asked for:
 * an error text, a login page, a layout no line of which is a record. Nothing of it was loaded.
 * Retrying the same call at once would get the same answer: a person checks the credentials and the
 * provider's status, then runs the window again.
 */
export class ProviderAnswerNotData extends typedError<{
  /** The body's first characters, on one line, secrets and personal data redacted. */
  readonly start: string;
}>('final') {
  constructor(what: string, why: string, start: string) {
    super(
      `${what}: the provider's answer is not a report (${why}); it starts: ${JSON.stringify(start)}; nothing of it was loaded: check the account's credentials and the provider's status, then run the window again`,
      { start },
    );
  }
}
