/**
 * ZIP reports (docs/provider-interface.md 2.2 `outputZipFile`), recognised by content (PK\x03\x04), never by name.
 *
 * Why not a streaming unzip: reading local headers front to back fails on entries written with a data
 * descriptor (sizes after the data) and on Zip64, and such readers check no CRC. So the archive is
 * spooled to a temporary file (with a size limit) and read through its central directory: sizes come
 * from the central directory (Zip64 extra fields included), every entry's CRC-32 and size are verified
 * while it streams out, and archive bombs are refused (limits on archive size, entry count, total
 * uncompressed size and compression ratio). Nested ZIPs are not followed. The temporary file is deleted
 * in every case, also when the consumer stops early.
 */

import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import { crc32, createInflateRaw } from 'node:zlib';
import { UnreadableInput } from '../../domain/errors.ts';

export interface ZipLimits {
  /** Largest archive spooled to disk, in bytes. */
  readonly maxArchiveBytes: number;
  /** Most entries (files and folders) in the central directory. */
  readonly maxEntries: number;
  /** Largest uncompressed size of the report entry, in bytes. */
  readonly maxUncompressedBytes: number;
  /** Highest uncompressed/compressed ratio, checked once the output passes `ratioFloorBytes`. */
  readonly maxRatio: number;
  readonly ratioFloorBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxArchiveBytes: 4 * 1024 ** 3,
  maxEntries: 1000,
  maxUncompressedBytes: 16 * 1024 ** 3,
  maxRatio: 1000,
  ratioFloorBytes: 1024 ** 2,
};

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;
const ZIP64_END = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;

/** Whether bytes start like a ZIP archive (a local file header, or the end record of an empty archive). */
export function looksLikeZip(head: Uint8Array): boolean {
  return (
    head.length >= 4 &&
    head[0] === 0x50 &&
    head[1] === 0x4b &&
    ((head[2] === 0x03 && head[3] === 0x04) || (head[2] === 0x05 && head[3] === 0x06))
  );
}

/** The first bytes of a stream, and a stream that yields everything again from the start. */
export async function peek(
  input: AsyncIterable<Buffer | string>,
  bytes: number,
): Promise<{ head: Buffer; stream: AsyncIterable<Buffer> }> {
  const iterator = input[Symbol.asyncIterator]();
  const seen: Buffer[] = [];
  let length = 0;
  let done = false;
  while (length < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    seen.push(chunk);
    length += chunk.length;
  }
  const head = Buffer.concat(seen, length);
  async function* again(): AsyncGenerator<Buffer> {
    try {
      if (head.length > 0) yield head;
      if (done) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      }
    } finally {
      if (!done) await iterator.return?.();
    }
  }
  return { head, stream: again() };
}

interface Entry {
  readonly name: string;
  readonly flags: number;
  readonly method: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localOffset: number;
}

/**
 * Streams the content of the one report file inside a ZIP archive (folders and `__MACOSX/` entries
 * are ignored), verifying its CRC-32 and size.
 * @throws UnreadableInput naming `fileName` for a truncated or malformed archive, a CRC or size
 *   mismatch, an encrypted or unsupported entry, more or fewer than one file, a nested ZIP, or a limit
 *   exceeded (archive bomb).
 */
export async function* unzipReport(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): AsyncGenerator<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'recon-zip-'));
  const path = join(dir, 'archive.zip');
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'w+', 0o600);
    let size = 0;
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limits.maxArchiveBytes) {
        throw new UnreadableInput(
          fileName,
          null,
          `ZIP archive is larger than the limit of ${limits.maxArchiveBytes} bytes`,
        );
      }
      await handle.write(bytes);
    }
    const entries = await readCentralDirectory(handle, size, fileName, limits);
    const files = entries.filter((e) => !e.name.endsWith('/') && !e.name.startsWith('__MACOSX/'));
    if (files.length !== 1) {
      throw new UnreadableInput(
        fileName,
        null,
        files.length === 0
          ? 'ZIP archive holds no file'
          : `ZIP archive holds ${files.length} files (${files
              .slice(0, 5)
              .map((f) => f.name)
              .join(', ')}); a report archive holds exactly one`,
      );
    }
    yield* streamEntry(handle, path, size, files[0] as Entry, fileName, limits);
  } finally {
    await handle?.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

async function readCentralDirectory(
  handle: FileHandle,
  size: number,
  fileName: string,
  limits: ZipLimits,
): Promise<Entry[]> {
  const broken = (why: string) => new UnreadableInput(fileName, null, `not a complete ZIP archive: ${why}`);
  const tailLength = Math.min(size, 22 + 0xffff);
  const tail = await readAt(handle, size - tailLength, tailLength);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === END_OF_CENTRAL && i + 22 + tail.readUInt16LE(i + 20) <= tail.length) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw broken('end of central directory not found (truncated download?)');
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locatorAt = size - tailLength + eocd - 20;
    const locator = locatorAt >= 0 ? await readAt(handle, locatorAt, 20) : Buffer.alloc(0);
    if (locator.length < 20 || locator.readUInt32LE(0) !== ZIP64_LOCATOR)
      throw broken('Zip64 locator missing');
    const z64At = safe(locator.readBigUInt64LE(8), 'Zip64 record offset', broken);
    const z64 = await readAt(handle, z64At, 56);
    if (z64.length < 56 || z64.readUInt32LE(0) !== ZIP64_END) throw broken('Zip64 end record missing');
    count = safe(z64.readBigUInt64LE(32), 'entry count', broken);
    cdSize = safe(z64.readBigUInt64LE(40), 'central directory size', broken);
    cdOffset = safe(z64.readBigUInt64LE(48), 'central directory offset', broken);
  }
  if (count > limits.maxEntries) {
    throw new UnreadableInput(
      fileName,
      null,
      `ZIP archive lists ${count} entries; the limit is ${limits.maxEntries} (archive bomb?)`,
    );
  }
  if (cdOffset + cdSize > size)
    throw broken('central directory lies beyond the end of the file (truncated?)');
  // Each entry takes at most 46 bytes plus three 64 KiB fields: a larger directory is not this archive's.
  if (cdSize > Math.max(count, 1) * (46 + 3 * 0xffff)) throw broken('central directory size is inconsistent');
  const cd = await readAt(handle, cdOffset, cdSize);
  const entries: Entry[] = [];
  let p = 0;
  for (let k = 0; k < count; k++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL_HEADER)
      throw broken(`central directory entry ${k + 1} is damaged`);
    const nameLength = cd.readUInt16LE(p + 28);
    const extraLength = cd.readUInt16LE(p + 30);
    const commentLength = cd.readUInt16LE(p + 32);
    let compressedSize = cd.readUInt32LE(p + 20);
    let uncompressed = cd.readUInt32LE(p + 24);
    let localOffset = cd.readUInt32LE(p + 42);
    const name = cd.toString('utf8', p + 46, p + 46 + nameLength);
    // Zip64 extended information (0x0001): only the fields whose 32-bit value is saturated, in order.
    const extraEnd = p + 46 + nameLength + extraLength;
    for (let x = p + 46 + nameLength; x + 4 <= extraEnd;) {
      const id = cd.readUInt16LE(x);
      const length = cd.readUInt16LE(x + 2);
      if (id === 0x0001) {
        let q = x + 4;
        const next = (what: string) => {
          if (q + 8 > x + 4 + length) throw broken(`Zip64 field ${what} of '${name}' is missing`);
          const v = safe(cd.readBigUInt64LE(q), what, broken);
          q += 8;
          return v;
        };
        if (uncompressed === 0xffffffff) uncompressed = next('size');
        if (compressedSize === 0xffffffff) compressedSize = next('compressed size');
        if (localOffset === 0xffffffff) localOffset = next('offset');
      }
      x += 4 + length;
    }
    entries.push({
      name,
      flags: cd.readUInt16LE(p + 8),
      method: cd.readUInt16LE(p + 10),
      crc: cd.readUInt32LE(p + 16),
      compressedSize,
      size: uncompressed,
      localOffset,
    });
    p = extraEnd + commentLength;
  }
  return entries;
}

function safe(value: bigint, what: string, broken: (why: string) => UnreadableInput): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw broken(`${what} is out of range`);
  return Number(value);
}

async function* streamEntry(
  handle: FileHandle,
  path: string,
  archiveSize: number,
  entry: Entry,
  fileName: string,
  limits: ZipLimits,
): AsyncGenerator<Buffer> {
  const where = `${fileName} (entry '${entry.name}')`;
  const fail = (why: string) => new UnreadableInput(where, null, why);
  if (entry.flags & 0x1) throw fail('the entry is encrypted');
  if (entry.method !== 0 && entry.method !== 8)
    throw fail(`compression method ${entry.method} is not supported (only stored and deflate)`);
  if (entry.size > limits.maxUncompressedBytes) {
    throw fail(
      `the entry declares ${entry.size} bytes uncompressed; the limit is ${limits.maxUncompressedBytes} (archive bomb?)`,
    );
  }
  const local = await readAt(handle, entry.localOffset, 30);
  if (local.length < 30 || local.readUInt32LE(0) !== LOCAL_HEADER)
    throw fail('local header not found (damaged archive)');
  const dataStart = entry.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (dataStart + entry.compressedSize > archiveSize)
    throw fail('the entry data is cut short (truncated archive)');

  const source = createReadStream(path, {
    start: dataStart,
    end: dataStart + entry.compressedSize - 1,
    highWaterMark: 256 * 1024,
  });
  const stream = entry.method === 8 ? pipeline(source, createInflateRaw(), () => {}) : source;
  let crc = 0;
  let total = 0;
  let first = true;
  try {
    if (entry.compressedSize === 0) source.destroy();
    else {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (first && chunk.length > 0) {
          first = false;
          if (looksLikeZip(chunk))
            throw fail('the entry is itself a ZIP archive; nested archives are not followed');
        }
        total += chunk.length;
        if (total > entry.size)
          throw fail(`the entry inflates beyond the ${entry.size} bytes its header declares`);
        if (total > limits.ratioFloorBytes && total > limits.maxRatio * Math.max(entry.compressedSize, 1)) {
          throw fail(`compression ratio exceeds ${limits.maxRatio}:1 (archive bomb?)`);
        }
        crc = crc32(chunk, crc);
        yield chunk;
      }
    }
  } catch (error) {
    if (error instanceof UnreadableInput) throw error;
    throw fail(`the compressed data is damaged: ${(error as Error).message}`);
  } finally {
    source.destroy();
    (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  }
  if (total !== entry.size)
    throw fail(`the entry has ${total} bytes; its header declares ${entry.size} (damaged archive)`);
  if (crc >>> 0 !== entry.crc >>> 0) {
    throw fail(`CRC-32 mismatch: computed ${hex(crc)}, the archive says ${hex(entry.crc)} (damaged archive)`);
  }
}

function hex(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}
