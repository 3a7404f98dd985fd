import { ConfigError } from '../../domain/errors.ts';
import { authorised } from './authorised.ts';
import type { ProviderConnection } from './connection.ts';
import { bodyStream } from './responses.ts';
import type { ProviderResponseStream, ReportRequest } from './types.ts';

/** POST {base}/report/v4/report: the body as a stream, never buffered whole. */
export async function requestReport(
  conn: ProviderConnection,
  req: ReportRequest,
): Promise<ProviderResponseStream> {
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
  const res = await authorised(conn, what, '/report/v4/report', body, req.signal);
  const contentType = String(res.headers['content-type'] ?? '');
  return {
    stream: bodyStream(what, res),
    contentType,
    zipped: /zip/i.test(contentType),
    description: `${what} ${outputType}${req.zip ? ' zipped' : ''}`,
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
