import type { Dispatcher } from 'undici';
import { join, need, type ProviderConnection } from './connection.ts';
import { ProviderAuthFailed } from './errors.ts';
import { exchange } from './exchange.ts';
import { rejection } from './responses.ts';
import { currentToken } from './token.ts';

/**
 * An authorised JSON call to the report API: a 401 gets one fresh token and one more try, then
 * ProviderAuthFailed; another 4xx is a ProviderRejectedRequest.
 */
export async function authorised(
  conn: ProviderConnection,
  what: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const base = need(conn, 'RECON_BASE_URL', what);
  const url = join(base, path);
  const payload = JSON.stringify(body);
  for (let round = 1; ; round++) {
    const used = await currentToken(conn);
    const res = await exchange(
      conn,
      what,
      {
        url,
        variable: conn.names.baseUrl,
        headers: {
          authorization: `Bearer ${used.value}`,
          'content-type': 'application/json',
          accept: 'application/json, text/csv, application/zip',
        },
        body: payload,
      },
      signal,
    );
    if (res.statusCode === 401) {
      await res.body.dump();
      if (round === 1) {
        if (conn.tokens.current === used) conn.tokens.current = null; // others may already hold a newer one
        continue;
      }
      throw new ProviderAuthFailed(
        `${what}: the provider refused a freshly issued token (HTTP 401): check ${conn.names.clientId} / ${conn.names.clientSecret} and the permissions of the ${conn.config.environment} client`,
        { status: 401 },
      );
    }
    if (res.statusCode >= 400) throw await rejection(conn, what, res);
    return res;
  }
}
