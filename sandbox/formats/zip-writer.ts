import { pipeline, Readable, Transform } from 'node:stream';
import { crc32, createDeflateRaw } from 'node:zlib';

/**
 * A streaming ZIP writer: one deflated entry whose size is not known in advance, so the local header
 * says "sizes follow" (general purpose flag bit 3) and a data descriptor carries the CRC and sizes
 * after the data; the central directory closes the archive. Nothing is buffered beyond zlib's window.
 * Limit: entries and archives under 4 GiB (no ZIP64), far above a report window.
 */
export async function* zipSingleEntry(
  entryName: string,
  content: Iterable<string | Buffer> | AsyncIterable<string | Buffer>,
): AsyncGenerator<Buffer> {
  const name = Buffer.from(entryName, 'utf8');
  const { time, date } = dosDateTime(new Date());
  const flags = 0x0008 | 0x0800; // sizes in data descriptor; UTF-8 name
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(flags, 6);
  local.writeUInt16LE(8, 8); // deflate
  local.writeUInt16LE(time, 10);
  local.writeUInt16LE(date, 12);
  local.writeUInt16LE(name.length, 26);
  yield Buffer.concat([local, name]);
  let offset = local.length + name.length;

  let crc = 0;
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      crc = crc32(buffer, crc);
      size += buffer.length;
      callback(null, buffer);
    },
  });
  let compressed = 0;
  const deflate = createDeflateRaw();
  pipeline(Readable.from(content, { objectMode: false }), count, deflate, (error) => {
    if (error) deflate.destroy(error);
  });
  for await (const out of deflate) {
    compressed += (out as Buffer).length;
    yield out as Buffer;
  }
  if (size >= 0xffffffff || compressed >= 0xffffffff) {
    throw new RangeError('ZIP entry exceeds 4 GiB: this writer does not produce ZIP64');
  }
  const descriptor = Buffer.alloc(16);
  descriptor.writeUInt32LE(0x08074b50, 0);
  descriptor.writeUInt32LE(crc >>> 0, 4);
  descriptor.writeUInt32LE(compressed, 8);
  descriptor.writeUInt32LE(size, 12);
  yield descriptor;
  const centralOffset = offset + compressed + descriptor.length;
  offset = 0;

  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(flags, 8);
  central.writeUInt16LE(8, 10);
  central.writeUInt16LE(time, 12);
  central.writeUInt16LE(date, 14);
  central.writeUInt32LE(crc >>> 0, 16);
  central.writeUInt32LE(compressed, 20);
  central.writeUInt32LE(size, 24);
  central.writeUInt16LE(name.length, 28);
  central.writeUInt32LE(offset, 42); // local header at the start of the archive
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  yield Buffer.concat([central, name, end]);
}

function dosDateTime(d: Date): { time: number; date: number } {
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}
