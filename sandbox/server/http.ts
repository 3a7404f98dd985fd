import type { IncomingMessage, ServerResponse } from 'node:http';

/** HTTP plumbing of the sandbox provider: failures with a status and body, JSON answers, bodies read with a limit. */

export class HttpFailure extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export const invalid = (errorCode: string, errorMessage: string) =>
  new HttpFailure(400, { errorCode, errorMessage });

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export async function readBody(req: IncomingMessage, limit = 1_000_000): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new HttpFailure(413, { errorCode: 'V413', errorMessage: 'request body too large' });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (!String(req.headers['content-type'] ?? '').includes('application/json')) {
    throw invalid('V001', 'Content-Type must be application/json');
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw invalid('V002', 'request body is not a JSON object');
}

/** Writes one buffer, waiting for drain (or close) when the socket is full. */
export function write(res: ServerResponse, buffer: Buffer): Promise<void> {
  if (buffer.length === 0 || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    if (res.write(buffer)) resolve();
    else {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    }
  });
}
