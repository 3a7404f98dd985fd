import { ConfigError } from '../../domain/errors.ts';

/**
 * Which provider addresses the client accepts, and how long to wait between attempts. Pure functions.
 */

const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || LOOPBACK_V4.test(host);
}

/**
 * Parses a provider URL from the environment: HTTPS, or plain HTTP on a loopback address only (the
 * sandbox). Throws ConfigError naming the variable otherwise. The value is never echoed when it has
 * user info, which could hold a password.
 */
export function checkProviderUrl(variable: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${variable} is not a URL: set it to https://host/path`);
  }
  if (url.username || url.password) {
    throw new ConfigError(`${variable} must not carry credentials in the URL: use the RECON_* secrets`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new ConfigError(
    `${variable}=${url.origin} is refused: the provider is reached over HTTPS only (plain HTTP is allowed for 127.0.0.0/8, ::1 and localhost, where the sandbox runs)`,
  );
}

/** Exponential back-off with full jitter in [delay/2, delay], capped. attempt starts at 1. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const delay = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(delay / 2 + random() * (delay / 2));
}

/** Retry-After as milliseconds: delta seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** expires_in may be a number or a string ("1800"); null when it is neither a positive number. */
export function parseExpiresIn(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}
