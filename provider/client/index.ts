import { PassThrough, type Readable } from 'node:stream';
import { Agent, type Dispatcher, request } from 'undici';
import type { Config } from '../../config/config.ts';
import { ConfigError, ReconError } from '../../domain/errors.ts';
import type { LegacyQueryType, ReportQueryType } from '../../domain/records.ts';
import {
  ProviderAuthFailed,
  ProviderRejectedRequest,
  ProviderStreamBroken,
  ProviderUnavailable,
  RateLimited,
} from './errors.ts';
import {
  backoffDelay,
  checkProviderUrl,
  checkTlsVerification,
  isLoopbackHost,
  parseExpiresIn,
  parseRetryAfter,
} from './http-policy.ts';
import { redactPersonal } from '../../domain/privacy.ts';
import { buildLegacyForm, type LegacyQueryRequest } from './legacy-limits.ts';
import { ENVIRONMENT_SETTING_NAMES, type ProviderSettingNames } from './setting-names.ts';

export * from './errors.ts';
export type { LegacyQueryRequest } from './legacy-limits.ts';

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
  /** Environment checked for settings that disable certificate verification (default process.env). */
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

interface Token {
  readonly value: string;
  readonly refreshAt: number;
}

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
  checkTlsVerification(options.env ?? process.env);
  const p = config.provider;
  const n = options.settingNames ?? ENVIRONMENT_SETTING_NAMES;
  const urls: Record<string, URL | undefined> = {};
  for (const [variable, value] of [
    ['baseUrl', p.baseUrl],
    ['authUrl', p.authUrl],
    ['queryUrl', p.queryUrl],
  ] as const) {
    urls[variable] = value === undefined ? undefined : checkProviderUrl(n[variable], value);
  }
  if (config.environment === 'production') {
    const local = Object.entries(urls).filter(([, u]) => u && isLoopbackHost(u.hostname));
    if (local.length > 0) {
      throw new ConfigError(
        `${n.environment}=production but ${local.map(([k]) => n[k as 'baseUrl']).join(', ')} point(s) at a loopback address (the sandbox): use the production settings, or ${n.environment}=staging`,
      );
    }
  }
  const maxAttempts = options.maxAttempts ?? 4;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const margin = (options.refreshMarginSeconds ?? 60) * 1000;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: 8,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
      headersTimeout: options.headersTimeoutMs ?? 60_000,
      bodyTimeout: options.bodyTimeoutMs ?? 60_000,
    });
  const secrets = () =>
    [p.clientSecret, p.legacyMerchantPass, token?.value].filter((s): s is string => !!s && s.length >= 4);
  const redact = (text: string) => secrets().reduce((t, s) => t.split(s).join('[redacted]'), text);

  let token: Token | null = null;
  let tokenInFlight: Promise<Token> | null = null;
  let tokenRequests = 0;

  function need(variable: 'baseUrl' | 'authUrl' | 'queryUrl', purpose: string): URL {
    const url = urls[variable];
    if (!url) throw new ConfigError(`${purpose} needs ${n[variable]}: set it ${n.where}`);
    return url;
  }
  const join = (base: URL, path: string) => new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base);

  /** One HTTP exchange with retries for network errors, 5xx and 429. Returns a 2xx or other 4xx response. */
  async function exchange(
    what: string,
    target: { url: URL; variable: string },
    send: () => Promise<Dispatcher.ResponseData>,
    signal?: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    let last: ReconError | null = null;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) {
        let wait = backoffDelay(attempt - 1, baseDelayMs, maxDelayMs);
        if (last instanceof RateLimited) wait = Math.max(wait, last.retryAfterMs);
        await sleep(wait, signal);
      }
      let res: Dispatcher.ResponseData;
      try {
        res = await send();
      } catch (error) {
        if (signal?.aborted) throw error;
        const code = (error as { code?: string }).code ?? (error as Error).name;
        last = new ProviderUnavailable(
          `${what}: no answer from the provider at ${target.url.host} (${code}) after ${attempt} attempt(s): check ${target.variable} and that the provider is reachable from here, then retry`,
          null,
          attempt,
        );
        continue;
      }
      if (res.statusCode === 429) {
        await res.body.dump();
        const retryAfterMs =
          parseRetryAfter(res.headers['retry-after']) ?? backoffDelay(attempt, baseDelayMs, maxDelayMs);
        last = new RateLimited(
          `${what}: rate limited by the provider (HTTP 429); retry after ${Math.ceil(retryAfterMs / 1000)} s`,
          retryAfterMs,
        );
        if (retryAfterMs > maxDelayMs) throw last;
        continue;
      }
      if (res.statusCode >= 500) {
        await res.body.dump();
        last = new ProviderUnavailable(
          `${what}: the provider answered HTTP ${res.statusCode} ${attempt} time(s); retry later`,
          res.statusCode,
          attempt,
        );
        continue;
      }
      return res;
    }
    throw last!;
  }

  async function fetchToken(): Promise<Token> {
    const authUrl = need('authUrl', 'the provider token request');
    const { clientId, clientSecret } = p;
    if (!clientId || !clientSecret) {
      throw new ConfigError(
        `the provider token request needs ${[!clientId && n.clientId, !clientSecret && n.clientSecret].filter(Boolean).join(', ')}: set them ${n.where}`,
      );
    }
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString();
    const url = join(authUrl, '/oauth2/token');
    const started = Date.now();
    tokenRequests++;
    const res = await exchange('token request', { url, variable: n.authUrl }, () =>
      request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
      }),
    );
    if (res.statusCode === 400 || res.statusCode === 401 || res.statusCode === 403) {
      await res.body.dump();
      throw new ProviderAuthFailed(
        `the token endpoint refused the client credentials (HTTP ${res.statusCode}): check ${n.clientId} / ${n.clientSecret} for the ${config.environment} environment`,
        res.statusCode,
      );
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new ProviderRejectedRequest(
        `token request: unexpected HTTP ${res.statusCode}`,
        res.statusCode,
        null,
        null,
      );
    }
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try {
      parsed = (await res.body.json()) as typeof parsed;
    } catch {
      throw new ProviderUnavailable('token request: the answer is not JSON; retry later', 200, 1);
    }
    if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
      throw new ProviderUnavailable('token request: the answer has no access_token; retry later', 200, 1);
    }
    // A missing or unreadable expires_in is treated as short-lived: refreshed after a minute.
    const lifetimeMs = (parseExpiresIn(parsed.expires_in) ?? 120) * 1000;
    const refreshIn = lifetimeMs > 2 * margin ? lifetimeMs - margin : Math.floor(lifetimeMs / 2);
    return { value: parsed.access_token, refreshAt: started + refreshIn };
  }

  /** The cached token, or a new one; concurrent callers share one request. */
  async function currentToken(): Promise<Token> {
    if (token && Date.now() < token.refreshAt) return token;
    tokenInFlight ??= fetchToken()
      .then((t) => {
        token = t;
        return t;
      })
      .finally(() => {
        tokenInFlight = null;
      });
    return tokenInFlight;
  }

  /** An authorised JSON call: 401 gets one fresh token and one more try. */
  async function authorised(
    what: string,
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const base = need('baseUrl', what);
    const url = join(base, path);
    const payload = JSON.stringify(body);
    for (let round = 1; ; round++) {
      const used = await currentToken();
      const res = await exchange(
        what,
        { url, variable: n.baseUrl },
        () =>
          request(url, {
            method: 'POST',
            dispatcher,
            signal,
            headers: {
              authorization: `Bearer ${used.value}`,
              'content-type': 'application/json',
              accept: 'application/json, text/csv, application/zip',
            },
            body: payload,
          }),
        signal,
      );
      if (res.statusCode === 401) {
        await res.body.dump();
        if (round === 1) {
          if (token === used) token = null; // others may already hold a newer one
          continue;
        }
        throw new ProviderAuthFailed(
          `${what}: the provider refused a freshly issued token (HTTP 401): check ${n.clientId} / ${n.clientSecret} and the permissions of the ${config.environment} client`,
          401,
        );
      }
      if (res.statusCode >= 400) throw await rejection(what, res);
      return res;
    }
  }

  async function rejection(what: string, res: Dispatcher.ResponseData): Promise<ReconError> {
    // Secrets and consumers' personal data are cut before the text can reach a message or a log.
    const text = redactPersonal(redact((await readSome(res.body, 4096)).trim()));
    let errorCode: string | null;
    let errorMessage: string | null;
    try {
      const json = JSON.parse(text) as { errorCode?: unknown; errorMessage?: unknown };
      errorCode = typeof json.errorCode === 'string' ? json.errorCode : null;
      errorMessage = typeof json.errorMessage === 'string' ? json.errorMessage : null;
    } catch {
      errorCode = null;
      errorMessage = text ? text.slice(0, 200) : null;
    }
    const detail =
      errorCode || errorMessage ? `: ${[errorCode, errorMessage].filter(Boolean).join(' ')}` : '';
    const hint =
      res.statusCode === 400
        ? 'the request is invalid; fix it, retrying will not help'
        : res.statusCode === 403
          ? 'the client is not allowed this call; ask the provider for the permission'
          : res.statusCode === 404
            ? 'check the provider URL'
            : 'retrying will not help';
    return new ProviderRejectedRequest(
      `${what} refused by the provider (HTTP ${res.statusCode}${detail}); ${hint}`,
      res.statusCode,
      errorCode,
      errorMessage,
    );
  }

  function bodyStream(what: string, res: Dispatcher.ResponseData): Readable {
    const out = new PassThrough();
    let bytes = 0;
    res.body.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    res.body.on('error', (error: Error & { code?: string }) => {
      out.destroy(
        new ProviderStreamBroken(
          `${what}: the response stopped after ${bytes} bytes (${error.code ?? error.name}); fetch it again`,
          bytes,
        ),
      );
    });
    out.on('close', () => {
      if (!res.body.destroyed) res.body.destroy();
    });
    res.body.pipe(out);
    return out;
  }

  return {
    get tokenRequests() {
      return tokenRequests;
    },

    async report(req) {
      const start = instantWithMillis('start', req.start);
      const end = instantWithMillis('end', req.end);
      const outputType = req.outputType ?? 'JSON';
      const what = `report ${req.queryType} ${start}..${end}`;
      const body: Record<string, unknown> = {
        productList: ['IBT'],
        report: {
          queryType: req.queryType,
          startDateTime: start,
          endDateTime: end,
          outputType,
          outputZipFile: req.zip ?? false,
        },
      };
      if (req.merchant) body.merchant = req.merchant;
      if (req.transaction) body.transaction = req.transaction;
      const res = await authorised(what, '/report/v4/report', body, req.signal);
      const contentType = String(res.headers['content-type'] ?? '');
      return {
        stream: bodyStream(what, res),
        contentType,
        zipped: /zip/i.test(contentType),
        description: `${what} ${outputType}${req.zip ? ' zipped' : ''}`,
      };
    },

    async transactionStatus(transactionId, opts = {}) {
      const what = `transaction status of ${transactionId}`;
      const res = await authorised(what, '/report/v4/transaction-status', { transactionId }, opts.signal);
      return (await res.body.json()) as Record<string, unknown>;
    },

    async confirmTransaction(body, opts = {}) {
      const res = await authorised('ConfirmTrans', '/service/servlet/ConfirmTrans', body, opts.signal);
      return (await res.body.json()) as { verification_code: string };
    },

    async legacyQuery(req) {
      const form = buildLegacyForm(req, {
        merchantId: p.legacyMerchantId ?? '',
        merchantPass: p.legacyMerchantPass ?? '',
      });
      if (!p.legacyMerchantId || !p.legacyMerchantPass) {
        throw new ConfigError(
          `the legacy query needs ${n.legacyMerchantId} and ${n.legacyMerchantPass}: set them ${n.where}`,
        );
      }
      const url = need('queryUrl', 'the legacy query');
      const what = `legacy query type ${req.queryType} ${req.from}..${req.to}`;
      const payload = form.toString();
      const res = await exchange(
        what,
        { url, variable: n.queryUrl },
        () =>
          request(url, {
            method: 'POST',
            dispatcher,
            signal: req.signal,
            headers: { accept: 'text/plain', 'content-type': 'application/x-www-form-urlencoded' },
            body: payload,
          }),
        req.signal,
      );
      if (res.statusCode === 401 || res.statusCode === 403) {
        await res.body.dump();
        throw new ProviderAuthFailed(
          `${what}: the provider refused the merchant credentials (HTTP ${res.statusCode}): check ${n.legacyMerchantId} / ${n.legacyMerchantPass} for the ${config.environment} environment`,
          res.statusCode,
        );
      }
      if (res.statusCode >= 400) throw await rejection(what, res);
      const contentType = String(res.headers['content-type'] ?? '');
      return {
        stream: bodyStream(what, res),
        contentType,
        zipped: /zip/i.test(contentType),
        description: `${what}${req.fields ? ` fields ${req.fields.join(',')}` : ''}`,
        queryType: req.queryType,
      };
    },

    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** An instant as the report endpoint wants it: UTC, milliseconds, Z. */
export function instantWithMillis(name: string, iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t) || !/(Z|[+-]\d{2}:?\d{2})$/.test(iso)) {
    throw new ConfigError(`report ${name} ${JSON.stringify(iso)} is not an ISO instant with a zone`);
  }
  return new Date(t).toISOString();
}

async function readSome(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= limit) break;
  }
  if (!body.destroyed) body.destroy();
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}
