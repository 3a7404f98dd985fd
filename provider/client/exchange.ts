import { type Dispatcher, request } from 'undici';
import type { ReconError } from '../../domain/errors.ts';
import type { ProviderConnection } from './connection.ts';
import { ProviderUnavailable, RateLimited } from './errors.ts';
import { backoffDelay, parseRetryAfter } from './http-policy.ts';

/** A POST to the provider: where (and the setting that names it, for messages), its headers and body. */
export interface ProviderPost {
  readonly url: URL;
  readonly variable: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * One HTTP exchange (a POST, as every provider call is) with retries for network errors, 5xx and 429
 * (429 honours Retry-After up to maxDelayMs). Returns a 2xx or other 4xx response; throws
 * ProviderUnavailable or RateLimited once the attempts are spent.
 */
export async function exchange(
  conn: ProviderConnection,
  what: string,
  target: ProviderPost,
  signal?: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const send = () =>
    request(target.url, {
      method: 'POST',
      dispatcher: conn.dispatcher,
      signal,
      headers: target.headers,
      body: target.body,
    });
  const { maxAttempts, baseDelayMs, maxDelayMs } = conn;
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
        { status: null, attempts: attempt },
      );
      continue;
    }
    if (res.statusCode === 429) {
      await res.body.dump();
      const retryAfterMs =
        parseRetryAfter(res.headers['retry-after']) ?? backoffDelay(attempt, baseDelayMs, maxDelayMs);
      last = new RateLimited(
        `${what}: rate limited by the provider (HTTP 429); retry after ${Math.ceil(retryAfterMs / 1000)} s`,
        { retryAfterMs },
      );
      if (retryAfterMs > maxDelayMs) throw last;
      continue;
    }
    if (res.statusCode >= 500) {
      await res.body.dump();
      last = new ProviderUnavailable(
        `${what}: the provider answered HTTP ${res.statusCode} ${attempt} time(s); retry later`,
        { status: res.statusCode, attempts: attempt },
      );
      continue;
    }
    return res;
  }
  throw last!;
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
