import type { IncomingMessage } from 'node:http';

/** A delivery's body as read ({@link readBody}). */
export interface ReadBody {
  readonly bytes: Buffer;
  /** The body was longer than the limit: `bytes` holds its first `limit` bytes only. */
  readonly truncated: boolean;
}

/** Reads the body, keeping at most `limit` bytes (the rest is read and dropped, so the answer arrives). */
export async function readBody(req: IncomingMessage, limit: number): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of req) {
    const c = chunk as Buffer;
    if (size + c.length > limit) {
      if (size < limit) chunks.push(c.subarray(0, limit - size));
      size = limit;
      truncated = true;
    } else {
      size += c.length;
      chunks.push(c);
    }
  }
  return { bytes: Buffer.concat(chunks), truncated };
}

export /** application/json or application/*+json, UTF-8 (the only charset JSON has) or no charset. */
function jsonContentType(header: string | undefined): boolean {
  if (header === undefined || header.trim() === '') return true;
  const [type = '', ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replaceAll('"', '');
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

export const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
