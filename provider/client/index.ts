import type { Config } from '../../config/config.ts';
import { openConnection } from './connection.ts';
import { requestLegacyQuery } from './legacy-query.ts';
import { requestReport } from './report.ts';
import { confirmTransaction, requestTransactionStatus } from './transaction-calls.ts';
import type { ProviderClient, ProviderClientOptions } from './types.ts';

export * from './errors.ts';
export type { LegacyQueryRequest } from './legacy-limits.ts';
export { instantWithMillis } from './report.ts';
export type {
  ProviderClient,
  ProviderClientOptions,
  ProviderResponseStream,
  ReportRequest,
} from './types.ts';

/**
 * Creates the provider client: the only code that speaks HTTP to the provider.
 *
 * - OAuth2 client credentials: one token cached and refreshed `refreshMarginSeconds` before
 *   expires_in ends; concurrent callers share one token request; a 401 gets a fresh token and one
 *   more try, then {@link ProviderAuthFailed}.
 * - Network errors, 5xx and 429 are retried `maxAttempts` times with exponential back-off and jitter
 *   (429 honours Retry-After), then thrown as {@link ProviderUnavailable} or {@link RateLimited}
 *   (retryable: the caller, Temporal, tries later). 400/403/404 throw {@link ProviderRejectedRequest}.
 * - A body cut after the headers surfaces as {@link ProviderStreamBroken} from the stream.
 * - HTTPS only, except loopback addresses; certificate verification cannot be turned off.
 * - Errors never carry request bodies, headers, tokens or credentials.
 */
export function createProviderClient(config: Config, options: ProviderClientOptions = {}): ProviderClient {
  const conn = openConnection(config, options);
  return {
    get tokenRequests() {
      return conn.tokens.requests;
    },
    report: (req) => requestReport(conn, req),
    transactionStatus: (transactionId, opts = {}) =>
      requestTransactionStatus(conn, transactionId, opts.signal),
    confirmTransaction: (body, opts = {}) => confirmTransaction(conn, body, opts.signal),
    legacyQuery: (req) => requestLegacyQuery(conn, req),
    async close() {
      if (conn.ownsDispatcher) await conn.dispatcher.close();
    },
  };
}
