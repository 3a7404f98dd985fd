import { ConfigError } from '../../domain/errors.ts';
import type { LegacyQueryType } from '../../domain/records.ts';
import { need, type ProviderConnection } from './connection.ts';
import { ProviderAuthFailed } from './errors.ts';
import { exchange } from './exchange.ts';
import { buildLegacyForm, type LegacyQueryRequest } from './legacy-limits.ts';
import { bodyStream, rejection } from './responses.ts';
import type { ProviderResponseStream } from './types.ts';

/** POST {query_url} form-encoded with the merchant credentials; limits checked before sending. */
export async function requestLegacyQuery(
  conn: ProviderConnection,
  req: LegacyQueryRequest & { signal?: AbortSignal },
): Promise<ProviderResponseStream & { queryType: LegacyQueryType }> {
  const p = conn.config.provider;
  const form = buildLegacyForm(req, {
    merchantId: p.legacyMerchantId ?? '',
    merchantPass: p.legacyMerchantPass ?? '',
  });
  if (!p.legacyMerchantId || !p.legacyMerchantPass) {
    throw new ConfigError(
      `the legacy query needs ${conn.names.legacyMerchantId} and ${conn.names.legacyMerchantPass}: set them ${conn.names.where}`,
    );
  }
  const url = need(conn, 'RECON_QUERY_URL', 'the legacy query');
  const what = `legacy query type ${req.queryType} ${req.from}..${req.to}`;
  const res = await exchange(
    conn,
    what,
    {
      url,
      variable: conn.names.queryUrl,
      headers: { accept: 'text/plain', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    },
    req.signal,
  );
  if (res.statusCode === 401 || res.statusCode === 403) {
    await res.body.dump();
    throw new ProviderAuthFailed(
      `${what}: the provider refused the merchant credentials (HTTP ${res.statusCode}): check ${conn.names.legacyMerchantId} / ${conn.names.legacyMerchantPass} for the ${conn.config.environment} environment`,
      { status: res.statusCode },
    );
  }
  if (res.statusCode >= 400) throw await rejection(conn, what, res);
  const contentType = String(res.headers['content-type'] ?? '');
  return {
    stream: bodyStream(what, res),
    contentType,
    zipped: /zip/i.test(contentType),
    description: `${what}${req.fields ? ` fields ${req.fields.join(',')}` : ''}`,
    queryType: req.queryType,
  };
}
