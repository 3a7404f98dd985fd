/**
 * Faults on demand. Counts (`serverErrors: 2`) hit the next data requests, deterministically, for
 * tests; rates (`errorRate: 0.1`) hit requests at random, for demos. Data requests are every endpoint
 * but the token endpoint.
 */
export interface SandboxFaults {
  /** The next N data requests are answered 500. */
  serverErrors?: number;
  /** Fraction (0..1) of data requests answered 500. */
  errorRate?: number;
  /** The next N data requests are answered 429 with Retry-After. */
  rateLimits?: number;
  /** Fraction (0..1) of data requests answered 429. */
  rateLimitRate?: number;
  /** Retry-After value sent with 429: seconds ("1") or an HTTP date. Default "1". */
  retryAfter?: string;
  /** Delay before every data response, in milliseconds. */
  slowMs?: number;
  /**
   * Delay, in milliseconds, of the report and legacy answers to queries of the window that starts on
   * this Eastern day (YYYY-MM-DD): that one window finishes last, the others as usual.
   */
  slowWindow?: { readonly from: string; readonly ms: number };
  /** The next N report or legacy bodies are cut (connection destroyed) after cutAfterBytes. */
  cuts?: number;
  /** Fraction (0..1) of report and legacy bodies cut. */
  cutRate?: number;
  /** Bytes of body sent before a cut (default 2048). */
  cutAfterBytes?: number;
  /** Zipped reports end cleanly but lose their last part: no data descriptor, no central directory. */
  truncateZip?: boolean;
  /** Tokens stop working after this many milliseconds, whatever expires_in says. */
  tokenTtlMs?: number;
  /**
   * The legacy query answers HTTP 200 with this page instead of its CSV, whatever it was asked (the
   * provider does not describe the interface's error bodies): an HTML "Login expired" page, or the
   * one line `Error: invalid merchant_pass`.
   */
  legacyErrorPage?: LegacyErrorPage;
  /** Every line of a legacy body gets one more column at its end. */
  extraColumn?: boolean;
  /**
   * Report and legacy bodies stop after this many bytes and end cleanly: the HTTP response is
   * complete (no cut connection), the data is not.
   */
  shortBodyBytes?: number;
}

export type LegacyErrorPage = 'login-expired' | 'invalid-merchant-pass';

/** The bodies of {@link SandboxFaults.legacyErrorPage}, as a provider's front end might send them. */
export const LEGACY_ERROR_PAGES: Record<LegacyErrorPage, { contentType: string; body: string }> = {
  'login-expired': {
    contentType: 'text/html; charset=utf-8',
    body:
      '<!DOCTYPE html>\n<html>\n<head><title>Login expired</title></head>\n<body>\n' +
      '<h1>Login expired</h1>\n<p>Your session has expired. Please sign in again.</p>\n' +
      '<form method="post" action="/login"><input type="hidden" name="token" value="a1b2c3d4e5f6">' +
      '</form>\n</body>\n</html>\n',
  },
  'invalid-merchant-pass': {
    contentType: 'text/plain; charset=utf-8',
    body: 'Error: invalid merchant_pass\n',
  },
};

export function count(bag: Record<string, number>, key: string): void {
  bag[key] = (bag[key] ?? 0) + 1;
}

/** Whether the next request gets this fault: a counted one is used up, else the rate decides. */
export function takeFault(
  holder: { faults: SandboxFaults },
  counter: 'serverErrors' | 'rateLimits' | 'cuts',
  rate: number | undefined,
): boolean {
  const left = holder.faults[counter] ?? 0;
  if (left > 0) {
    holder.faults = { ...holder.faults, [counter]: left - 1 };
    return true;
  }
  return rate !== undefined && rate > 0 && Math.random() < rate;
}

/** Waits when the query's window starts on the day of the `slowWindow` fault (see SandboxFaults). */
export async function delayWindow(holder: { faults: SandboxFaults }, easternFrom: string): Promise<void> {
  const slow = holder.faults.slowWindow;
  if (slow && slow.from === easternFrom) await new Promise((r) => setTimeout(r, slow.ms));
}
