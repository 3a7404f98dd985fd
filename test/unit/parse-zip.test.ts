import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UnreadableInput } from '../../domain/errors.ts';
import { parseReport } from '../../provider/formats/index.ts';
import { DEFAULT_ZIP_LIMITS, looksLikeZip, unzipReport } from '../../provider/formats/zip.ts';
import { collect, fixture, records, streamOf } from '../support/parse-helpers.ts';
import { buildZip } from '../support/zip-bytes.ts';

// Spooled archives go to os.tmpdir(): point it at a private folder to prove nothing is left behind.
let spool = '';
const originalTmp = process.env.TMPDIR;
beforeAll(() => {
  spool = mkdtempSync(join(tmpdir(), 'recon-zip-test-'));
  process.env.TMPDIR = spool;
});
afterEach(() => {
  expect(readdirSync(spool)).toEqual([]);
});
afterAll(() => {
  if (originalTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = originalTmp;
  rmSync(spool, { recursive: true, force: true });
});

const RETURNS = fixture('legacy/type1-returns.csv');
const returns = (data: Buffer, fileName = 'r.zip') =>
  collect(parseReport(streamOf(data, 64), { format: 'legacy', queryType: '1', fileName }));

async function unzip(data: Buffer, limits = DEFAULT_ZIP_LIMITS): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of unzipReport(streamOf(data, 100), 'a.zip', limits)) parts.push(chunk);
  return Buffer.concat(parts);
}

describe('ZIP reports', () => {
  it('recognises ZIP by content only', () => {
    expect(looksLikeZip(Buffer.from('PK\x03\x04rest'))).toBe(true);
    expect(looksLikeZip(Buffer.from('PK\x05\x06'))).toBe(true);
    expect(looksLikeZip(Buffer.from('20260320,4'))).toBe(false);
    expect(looksLikeZip(Buffer.from('PK'))).toBe(false);
  });

  it('reads deflate, stored, data-descriptor and Zip64 archives the same', async () => {
    const expected = records(await returns(RETURNS));
    expect(expected).toHaveLength(2);
    for (const archive of [
      buildZip([{ name: 'returns.csv', data: RETURNS }]),
      buildZip([{ name: 'returns.csv', data: RETURNS, stored: true }]),
      buildZip([{ name: 'returns.csv', data: RETURNS }], { dataDescriptor: true }),
      buildZip([{ name: 'returns.csv', data: RETURNS }], { zip64: true }),
      buildZip([{ name: 'returns.csv', data: RETURNS }], { zip64: true, dataDescriptor: true }),
      buildZip([
        { name: 'report/', data: Buffer.alloc(0), stored: true },
        { name: 'report/returns.csv', data: RETURNS },
      ]),
    ]) {
      expect(records(await returns(archive))).toEqual(expected);
    }
  });

  it('detects a corrupted entry by its CRC-32', async () => {
    const stored = Buffer.from(fixture('legacy/type1-returns-stored.zip'));
    const at = stored.indexOf('0000012550');
    stored[at] = '1'.charCodeAt(0);
    await expect(returns(stored, 'crc.zip')).rejects.toThrow(
      "crc.zip (entry 'type1-returns.csv'): CRC-32 mismatch: computed ",
    );
    await expect(unzip(buildZip([{ name: 'a.csv', data: RETURNS }], { crc: 0x12345678 }))).rejects.toThrow(
      /CRC-32 mismatch: computed [0-9a-f]{8}, the archive says 12345678 \(damaged archive\)$/,
    );
  });

  it('throws UnreadableInput for a truncated archive, wherever it is cut', async () => {
    const whole = fixture('report/transactions-and-returns.json.zip');
    for (const keep of [10, 200, whole.length - 30, whole.length - 1]) {
      const cut = whole.subarray(0, keep);
      await expect(
        collect(parseReport(streamOf(cut, 50), { format: 'report-json', fileName: 'cut.zip' })),
      ).rejects.toThrow(UnreadableInput);
    }
    await expect(unzip(whole.subarray(0, 200))).rejects.toThrow(
      'a.zip: not a complete ZIP archive: end of central directory not found (truncated download?)',
    );
  });

  it('refuses archive bombs: ratio, declared size, size beyond the declared one, entry count', async () => {
    const zeros = Buffer.alloc(8 * 1024 * 1024);
    const bomb = buildZip([{ name: 'r.csv', data: zeros }]);
    expect(bomb.length).toBeLessThan(20_000);
    await expect(unzip(bomb)).rejects.toThrow(
      "a.zip (entry 'r.csv'): compression ratio exceeds 1000:1 (archive bomb?)",
    );
    await expect(unzip(bomb, { ...DEFAULT_ZIP_LIMITS, maxUncompressedBytes: 1024 * 1024 })).rejects.toThrow(
      'the entry declares 8388608 bytes uncompressed; the limit is 1048576 (archive bomb?)',
    );
    const liar = buildZip([{ name: 'r.csv', data: RETURNS }], { declaredSize: 100 });
    await expect(unzip(liar)).rejects.toThrow('the entry inflates beyond the 100 bytes its header declares');
    const many = buildZip(
      Array.from({ length: 5 }, (_, i) => ({ name: `d${i}/`, data: Buffer.alloc(0), stored: true })),
    );
    await expect(unzip(many, { ...DEFAULT_ZIP_LIMITS, maxEntries: 4 })).rejects.toThrow(
      'a.zip: ZIP archive lists 5 entries; the limit is 4 (archive bomb?)',
    );
    await expect(unzip(bomb, { ...DEFAULT_ZIP_LIMITS, maxArchiveBytes: 1000 })).rejects.toThrow(
      'a.zip: ZIP archive is larger than the limit of 1000 bytes',
    );
  });

  it('does not follow nested ZIPs and wants exactly one file', async () => {
    const inner = buildZip([{ name: 'r.csv', data: RETURNS }]);
    await expect(unzip(buildZip([{ name: 'inner.zip', data: inner }]))).rejects.toThrow(
      "a.zip (entry 'inner.zip'): the entry is itself a ZIP archive; nested archives are not followed",
    );
    await expect(
      unzip(
        buildZip([
          { name: 'a.csv', data: RETURNS },
          { name: 'b.csv', data: RETURNS },
        ]),
      ),
    ).rejects.toThrow('a.zip: ZIP archive holds 2 files (a.csv, b.csv); a report archive holds exactly one');
    await expect(unzip(buildZip([]))).rejects.toThrow('a.zip: ZIP archive holds no file');
  });

  it('deletes the spooled file when the consumer stops early', async () => {
    for await (const row of parseReport(streamOf(buildZip([{ name: 'r.csv', data: RETURNS }])), {
      format: 'legacy',
      queryType: '1',
      fileName: 'r.zip',
    })) {
      expect(row.line).toBe(1);
      break;
    }
  });
});
