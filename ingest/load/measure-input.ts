import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * A pass-through placed before the parser: it hashes (SHA-256) and counts the bytes exactly as
 * received (before any unzipping) and keeps the first bytes to tell a ZIP archive or an NDJSON file
 * from the rest, without buffering the input.
 */
export class MeasureInput extends Transform {
  bytes = 0;
  private readonly hash = createHash('sha256');
  private head = Buffer.alloc(0);

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.hash.update(buf);
    this.bytes += buf.length;
    if (this.head.length < 64) this.head = Buffer.concat([this.head, buf.subarray(0, 64 - this.head.length)]);
    callback(null, buf);
  }

  /** Hex SHA-256 of everything seen so far (call once, at the end). */
  sha256(): string {
    return this.hash.digest('hex');
  }

  /** A ZIP archive starts with the local file header signature PK\x03\x04 (or PK\x05\x06 when empty). */
  get zipped(): boolean {
    return this.head.length >= 4 && this.head[0] === 0x50 && this.head[1] === 0x4b && this.head[2]! < 0x09;
  }

  /** The first non-blank character, to tell NDJSON (`{`) from CSV. */
  get firstChar(): string | undefined {
    return this.head
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart()[0];
  }
}
