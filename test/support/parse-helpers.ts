import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { ParsedRow } from '../../domain/records.ts';

export const FIXTURES = new URL('../fixtures/', import.meta.url);

export function fixture(path: string): Buffer {
  return readFileSync(new URL(path, FIXTURES));
}

/** A stream of the bytes in chunks of `size` bytes, to cross every chunk-boundary case. */
export function streamOf(data: string | Buffer, size = 7): Readable {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

export async function collect<R>(rows: AsyncIterable<ParsedRow<R>>): Promise<ParsedRow<R>[]> {
  const out: ParsedRow<R>[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

export function records<R>(rows: ParsedRow<R>[]): R[] {
  return rows.map((r) => {
    if (!r.ok) throw new Error(`line ${r.line} rejected: ${r.reason}`);
    return r.record;
  });
}

export function rejections<R>(rows: ParsedRow<R>[]): { line: number; reason: string }[] {
  return rows.flatMap((r) => (r.ok ? [] : [{ line: r.line, reason: r.reason }]));
}
