import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { LegacyQueryType, ReportQueryType } from '../../domain/records.ts';
import type { LegacyQueryRequest } from './legacy-limits.ts';
import type { ProviderSettingNames } from './setting-names.ts';

/** The provider client's interface, its options and what its calls take and give. */

export interface ProviderClientOptions {
  /** Attempts per call for network errors, 5xx and 429 before a typed retryable error (default 4). */
  maxAttempts?: number;
  /** First back-off delay; doubled per attempt, with jitter (default 250 ms). */
  baseDelayMs?: number;
  /** Longest wait between attempts, and the longest Retry-After honoured in-process (default 10 s). */
  maxDelayMs?: number;
  connectTimeoutMs?: number;
  /** Time to the response headers (default 60 s: a big report may take a while to start). */
  headersTimeoutMs?: number;
  /** Longest silence inside a body (default 60 s). */
  bodyTimeoutMs?: number;
  /** Refresh a token this many seconds before expires_in runs out (default 60). */
  refreshMarginSeconds?: number;
  /** Environment checked for settings that disable certificate verification (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Shared dispatcher (tests); by default the client owns a keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** How messages name the settings (default: the RECON_* variables of the account `default`). */
  settingNames?: ProviderSettingNames;
}

export interface ReportRequest {
  readonly queryType: ReportQueryType;
  /** UTC instants; sent with milliseconds and Z. */
  readonly start: string;
  readonly end: string;
  readonly outputType?: 'JSON' | 'CSV';
  readonly zip?: boolean;
  readonly merchant?: {
    merchantList?: string[];
    merchantConsumerId?: string;
    merchantTransactionList?: string[];
  };
  readonly transaction?: Record<string, string>;
  readonly signal?: AbortSignal;
}

/** A response body being received: read it once (pipe it into the parser), or destroy it. */
export interface ProviderResponseStream {
  readonly stream: Readable;
  readonly contentType: string;
  /** The body is a ZIP archive (Content-Type application/zip). */
  readonly zipped: boolean;
  /** What was asked, for lineage (no secrets): e.g. "report TRANSACTION 2026-11-01T04:00:00.000Z..". */
  readonly description: string;
}

export interface ProviderClient {
  /** POST {base}/report/v4/report: the body as a stream, never buffered whole. */
  report(req: ReportRequest): Promise<ProviderResponseStream>;
  /** POST {base}/report/v4/transaction-status. */
  transactionStatus(
    transactionId: string,
    options?: { signal?: AbortSignal },
  ): Promise<Record<string, unknown>>;
  /** POST {base}/service/servlet/ConfirmTrans with a ConfirmTransactionRequest. */
  confirmTransaction(
    body: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<{ verification_code: string }>;
  /** POST {query_url} form-encoded; limits checked before sending. */
  legacyQuery(
    req: LegacyQueryRequest & { signal?: AbortSignal },
  ): Promise<ProviderResponseStream & { queryType: LegacyQueryType }>;
  /** Number of token requests made (for tests and diagnostics). */
  readonly tokenRequests: number;
  close(): Promise<void>;
}
