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
}

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
