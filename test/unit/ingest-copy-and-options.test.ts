import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../domain/errors.ts';
import {
  CopyBuffers,
  copyFields,
  copyLine,
  copyRecordLine,
  copyTextValue,
  copyValue,
} from '../../ingest/load/copy-text.ts';
import { reportFileOptions } from '../../ingest/load/source-of.ts';

describe('COPY text encoding', () => {
  it('escapes backslash, tab, newline and carriage return, and writes null as \\N', () => {
    expect(copyValue('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
    expect(copyValue(null)).toBe('\\N');
    expect(copyValue(undefined)).toBe('\\N');
    expect(copyValue('\\N')).toBe('\\\\N');
    expect(copyValue(-2015)).toBe('-2015');
    expect(copyValue(true)).toBe('t');
    expect(copyValue('nul\0here')).toBe('nul\uFFFDhere');
  });

  it('refuses a number that is not a safe integer rather than write a rounded amount', () => {
    expect(() => copyValue(20.15)).toThrow('20.15 is not a safe integer');
    expect(() => copyValue(2 ** 53)).toThrow(RangeError);
  });

  it('builds whole lines in column order', () => {
    expect(copyLine([1, 'x', null])).toBe('1\tx\t\\N\n');
    expect(copyRecordLine(7, 3, { b: 'y', a: 'x\ty' }, ['a', 'b', 'c'])).toBe('7\t3\tx\\ty\ty\t\\N\n');
    // A column outside the carried ones is written as null, whatever the record holds.
    expect(copyFields({ a: 'x', b: 'y' }, ['a', 'b'], new Set(['a']))).toBe('x\t\\N');
  });

  it('encodes rows as UTF-8 into buffers that each end with a whole row, however long or wide the row', () => {
    const rows = [
      'é\tmot\n',
      `${'€'.repeat(30_000)}\n`,
      ...Array.from({ length: 5_000 }, (_, i) => `${i}\tCAD\t𝄞 ${'x'.repeat(i % 50)}\n`),
      `${'y'.repeat(100_000)}\n`,
      'last\n',
    ];
    const buffers = new CopyBuffers();
    for (const row of rows) buffers.write(row);
    const taken = buffers.take();
    expect(taken.length).toBeGreaterThan(2);
    for (const b of taken) expect(b.at(-1)).toBe(0x0a);
    expect(Buffer.concat(taken).toString('utf8')).toBe(rows.join(''));
    // Taken once: the next rows start new buffers.
    expect(buffers.take()).toEqual([]);
    buffers.write('again\n');
    expect(buffers.take().map((b) => b.toString())).toEqual(['again\n']);
  });

  it('reads a field back as it was before escaping', () => {
    for (const text of ['plain', 'a\\b\tc\nd\re', '\\N', 'ends with \\', '\\t is not a tab']) {
      expect(copyTextValue(copyValue(text))).toBe(text);
    }
  });
});

describe('recon parse/import options', () => {
  it('derives the load source from format and query type', () => {
    expect(reportFileOptions({ format: 'legacy', queryType: '5' })).toEqual({
      format: 'legacy',
      queryType: '5',
      fields: undefined,
      source: 'legacy-transactions',
    });
    expect(reportFileOptions({ format: 'legacy', queryType: '6', fields: '4, 1,2' }).fields).toEqual([
      4, 1, 2,
    ]);
    expect(reportFileOptions({ format: 'legacy', queryType: '1' }).source).toBe('legacy-returns');
    expect(reportFileOptions({ format: 'legacy', queryType: '4' }).source).toBe('legacy-adjustments');
    expect(reportFileOptions({ format: 'report-json' }).source).toBe('report-transactions');
    expect(reportFileOptions({ format: 'report-csv', queryType: 'return' }).source).toBe('report-returns');
    expect(reportFileOptions({ format: 'report-csv', queryType: 'TRANSACTION' }).source).toBe(
      'report-transactions',
    );
  });

  it('says which option to fix', () => {
    expect(() => reportFileOptions({ format: 'xml' })).toThrow(
      new ConfigError('--format "xml" is not valid: use legacy, report-json, report-csv'),
    );
    expect(() => reportFileOptions({ format: 'report-csv' })).toThrow(
      '--format report-csv needs --query-type TRANSACTION or RETURN (got "")',
    );
    expect(() => reportFileOptions({ format: 'legacy', queryType: '1', fields: '1,2' })).toThrow(
      '--fields applies only to --format legacy with --query-type 5 or 6',
    );
    expect(() => reportFileOptions({ format: 'legacy', queryType: '5', fields: '1,1' })).toThrow(
      '--fields "1,1" lists a field twice',
    );
    expect(() => reportFileOptions({ format: 'legacy', queryType: '5', fields: '1,x' })).toThrow(
      '--fields "1,x": "x" is not a field number 1-22',
    );
  });
});
