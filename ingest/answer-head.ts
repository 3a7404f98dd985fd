import { Transform, type TransformCallback } from 'node:stream';

/** Bytes of a provider's answer kept to quote its start in an error. */
const HEAD_BYTES = 512;

/**
 * A pass-through between the provider's answer and the loader that keeps the answer's first bytes,
 * so that an answer that is not a report can be quoted by its start (ingest/pull-source.ts).
 */
export class AnswerHead extends Transform {
  private head = Buffer.alloc(0);

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.head.length < HEAD_BYTES) {
      this.head = Buffer.concat([this.head, buf.subarray(0, HEAD_BYTES - this.head.length)]);
    }
    callback(null, buf);
  }

  /** The first bytes as text (a character cut at the end is dropped). */
  text(): string {
    return this.head.toString('utf8').replace(/\uFFFD$/, '');
  }
}
