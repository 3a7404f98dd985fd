import { PassThrough, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ReconError } from '../../domain/errors.ts';
import { redactPersonal } from '../../domain/privacy.ts';
import { redactSecrets, type ProviderConnection } from './connection.ts';
import { ProviderRejectedRequest, ProviderStreamBroken } from './errors.ts';

/** What the client makes of a provider's answer: a refusal as a typed error, a body as a guarded stream. */

/** The typed error of a 4xx answer, with the provider's code and message (secrets and personal data cut). */
export async function rejection(
  conn: ProviderConnection,
  what: string,
  res: Dispatcher.ResponseData,
): Promise<ReconError> {
  // Secrets and consumers' personal data are cut before the text can reach a message or a log.
  const text = redactPersonal(redactSecrets(conn, (await readSome(res.body, 4096)).trim()));
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
  const detail = errorCode || errorMessage ? `: ${[errorCode, errorMessage].filter(Boolean).join(' ')}` : '';
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
    { status: res.statusCode, errorCode, errorMessage },
  );
}

/** The body as a stream that fails with ProviderStreamBroken (bytes received so far) when cut. */
export function bodyStream(what: string, res: Dispatcher.ResponseData): Readable {
  const out = new PassThrough();
  let bytes = 0;
  res.body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  res.body.on('error', (error: Error & { code?: string }) => {
    out.destroy(
      new ProviderStreamBroken(
        `${what}: the response stopped after ${bytes} bytes (${error.code ?? error.name}); fetch it again`,
        { bytesReceived: bytes },
      ),
    );
  });
  out.on('close', () => {
    if (!res.body.destroyed) res.body.destroy();
  });
  res.body.pipe(out);
  return out;
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
