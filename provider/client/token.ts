import { ConfigError } from '../../domain/errors.ts';
import { join, need, type ProviderConnection, type Token } from './connection.ts';
import { ProviderAuthFailed, ProviderRejectedRequest, ProviderUnavailable } from './errors.ts';
import { exchange } from './exchange.ts';
import { parseExpiresIn } from './http-policy.ts';

/** OAuth2 client credentials: one cached token, refreshed before expires_in ends. */

/** The cached token, or a new one; concurrent callers share one request. */
export async function currentToken(conn: ProviderConnection): Promise<Token> {
  const cache = conn.tokens;
  if (cache.current && Date.now() < cache.current.refreshAt) return cache.current;
  cache.inFlight ??= fetchToken(conn)
    .then((t) => {
      cache.current = t;
      return t;
    })
    .finally(() => {
      cache.inFlight = null;
    });
  return cache.inFlight;
}

async function fetchToken(conn: ProviderConnection): Promise<Token> {
  const { config } = conn;
  const authUrl = need(conn, 'RECON_AUTH_URL', 'the provider token request');
  const { clientId, clientSecret } = config.provider;
  if (!clientId || !clientSecret) {
    throw new ConfigError(
      `the provider token request needs ${[!clientId && conn.names.clientId, !clientSecret && conn.names.clientSecret].filter(Boolean).join(', ')}: set them ${conn.names.where}`,
    );
  }
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  }).toString();
  const url = join(authUrl, '/oauth2/token');
  const started = Date.now();
  conn.tokens.requests++;
  const res = await exchange(conn, 'token request', {
    url,
    variable: conn.names.authUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body,
  });
  if (res.statusCode === 400 || res.statusCode === 401 || res.statusCode === 403) {
    await res.body.dump();
    throw new ProviderAuthFailed(
      `the token endpoint refused the client credentials (HTTP ${res.statusCode}): check ${conn.names.clientId} / ${conn.names.clientSecret} for the ${config.environment} environment`,
      { status: res.statusCode },
    );
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new ProviderRejectedRequest(`token request: unexpected HTTP ${res.statusCode}`, {
      status: res.statusCode,
      errorCode: null,
      errorMessage: null,
    });
  }
  let parsed: { access_token?: unknown; expires_in?: unknown };
  try {
    parsed = (await res.body.json()) as typeof parsed;
  } catch {
    throw new ProviderUnavailable('token request: the answer is not JSON; retry later', {
      status: 200,
      attempts: 1,
    });
  }
  if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
    throw new ProviderUnavailable('token request: the answer has no access_token; retry later', {
      status: 200,
      attempts: 1,
    });
  }
  // A missing or unreadable expires_in is treated as short-lived: refreshed after a minute.
  const margin = conn.refreshMarginMs;
  const lifetimeMs = (parseExpiresIn(parsed.expires_in) ?? 120) * 1000;
  const refreshIn = lifetimeMs > 2 * margin ? lifetimeMs - margin : Math.floor(lifetimeMs / 2);
  return { value: parsed.access_token, refreshAt: started + refreshIn };
}
