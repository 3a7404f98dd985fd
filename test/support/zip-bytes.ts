import { crc32, deflateRawSync } from 'node:zlib';

/** One file of a test archive. */
export interface TestEntry {
  name: string;
  data: Buffer;
  /** Store instead of deflate. */
  stored?: boolean;
}

export interface TestZipOptions {
  /** Local headers carry zeros and a data descriptor follows each entry (general flag bit 3). */
  dataDescriptor?: boolean;
  /** Saturated 32-bit fields, Zip64 extra fields in the central directory, Zip64 end records. */
  zip64?: boolean;
  /** Override the CRC-32 written in the headers. */
  crc?: number;
  /** Override the uncompressed size written in the central directory. */
  declaredSize?: number;
}

/**
 * Writes a ZIP archive byte by byte (APPNOTE 6.3), so that tests control exactly the features the
 * reader must cope with: data descriptors, Zip64, wrong CRCs, lying sizes.
 */
export function buildZip(entries: TestEntry[], options: TestZipOptions = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const body = entry.stored ? entry.data : deflateRawSync(entry.data);
    const crc = options.crc ?? crc32(entry.data);
    const size = options.declaredSize ?? entry.data.length;
    const name = Buffer.from(entry.name);
    const flags = options.dataDescriptor ? 0x08 : 0;
    const method = entry.stored ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(options.zip64 ? 45 : 20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(options.dataDescriptor ? 0 : crc, 14);
    local.writeUInt32LE(options.dataDescriptor ? 0 : body.length, 18);
    local.writeUInt32LE(options.dataDescriptor ? 0 : size, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, body);
    let length = local.length + name.length + body.length;
    if (options.dataDescriptor) {
      const descriptor = Buffer.alloc(16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(body.length, 8);
      descriptor.writeUInt32LE(size, 12);
      parts.push(descriptor);
      length += 16;
    }
    const extra = Buffer.alloc(options.zip64 ? 28 : 0);
    if (options.zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(size), 4);
      extra.writeBigUInt64LE(BigInt(body.length), 12);
      extra.writeBigUInt64LE(BigInt(offset), 20);
    }
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(0x031e, 4);
    cd.writeUInt16LE(options.zip64 ? 45 : 20, 6);
    cd.writeUInt16LE(flags, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(options.zip64 ? 0xffffffff : body.length, 20);
    cd.writeUInt32LE(options.zip64 ? 0xffffffff : size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt16LE(extra.length, 30);
    cd.writeUInt32LE(options.zip64 ? 0xffffffff : offset, 42);
    central.push(cd, name, extra);
    offset += length;
  }
  const cdBytes = Buffer.concat(central);
  const tail: Buffer[] = [];
  if (options.zip64) {
    const z64 = Buffer.alloc(56);
    z64.writeUInt32LE(0x06064b50, 0);
    z64.writeBigUInt64LE(44n, 4);
    z64.writeUInt16LE(45, 12);
    z64.writeUInt16LE(45, 14);
    z64.writeBigUInt64LE(BigInt(entries.length), 24);
    z64.writeBigUInt64LE(BigInt(entries.length), 32);
    z64.writeBigUInt64LE(BigInt(cdBytes.length), 40);
    z64.writeBigUInt64LE(BigInt(offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(offset + cdBytes.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(z64, locator);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(options.zip64 ? 0xffff : entries.length, 8);
  end.writeUInt16LE(options.zip64 ? 0xffff : entries.length, 10);
  end.writeUInt32LE(options.zip64 ? 0xffffffff : cdBytes.length, 12);
  end.writeUInt32LE(options.zip64 ? 0xffffffff : offset, 16);
  return Buffer.concat([...parts, cdBytes, ...tail, end]);
}
