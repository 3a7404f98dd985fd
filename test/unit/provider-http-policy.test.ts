import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  checkProviderUrl,
  isLoopbackHost,
  parseExpiresIn,
  parseRetryAfter,
} from '../../provider/client/http-policy.ts';

describe('provider HTTP policy', () => {
  it('knows the loopback addresses', () => {
    expect(['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', 'LOCALHOST'].map(isLoopbackHost)).toEqual(
      [true, true, true, true, true, true],
    );
    expect(
      ['128.0.0.1', '10.0.0.1', 'localhost.example.com', '::2', '127.0.0.1.nip.io'].map(isLoopbackHost),
    ).toEqual([false, false, false, false, false]);
  });

  it('accepts HTTPS anywhere and HTTP on loopback only', () => {
    expect(checkProviderUrl('RECON_BASE_URL', 'https://api.provider.example/v').href).toBe(
      'https://api.provider.example/v',
    );
    expect(checkProviderUrl('RECON_BASE_URL', 'http://127.0.0.1:8080/api').port).toBe('8080');
    expect(() => checkProviderUrl('RECON_QUERY_URL', 'http://10.1.1.1/q')).toThrow(
      'RECON_QUERY_URL=http://10.1.1.1 is refused: the provider is reached over HTTPS only',
    );
    expect(() => checkProviderUrl('RECON_QUERY_URL', 'ftp://127.0.0.1/q')).toThrow('is refused');
    expect(() => checkProviderUrl('RECON_AUTH_URL', 'not a url')).toThrow(
      'RECON_AUTH_URL is not a URL: set it to https://host/path',
    );
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter(['2'], now)).toBe(2000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });

  it('reads expires_in as a number or a string', () => {
    expect([parseExpiresIn('1800'), parseExpiresIn(1800), parseExpiresIn(' 60 ')]).toEqual([1800, 1800, 60]);
    expect([parseExpiresIn('abc'), parseExpiresIn(0), parseExpiresIn(null), parseExpiresIn('-5')]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });

  it('backs off exponentially with jitter between half and the whole delay, capped', () => {
    expect([1, 2, 3, 4].map((a) => backoffDelay(a, 100, 10_000, () => 0))).toEqual([50, 100, 200, 400]);
    expect([1, 2, 3, 4].map((a) => backoffDelay(a, 100, 10_000, () => 1))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(20, 100, 5_000, () => 1)).toBe(5_000);
  });
});
