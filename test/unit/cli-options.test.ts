import { InvalidDateWindow } from '../../domain/time/date-window.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { dateArg, instantArg, outputFileArg, wholeNumberArg } from '../../cli/options.ts';
import { isoDate } from '../../domain/time/calendar.ts';
import { pullWindow } from '../../ingest/pull-source.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';

const dir = mkdtempSync(join(tmpdir(), 'recon-cli-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the one strict date of the command line', () => {
  it('accepts YYYY-MM-DD dates that exist, leap days included', () => {
    expect(isoDate('2026-04-01')).toBe('2026-04-01');
    expect(dateArg('2028-02-29')).toBe('2028-02-29');
  });

  it.each(['2026-02-30', '2026/04/01', '20260401', '2026-4-1', '2026-13-01', '2027-02-29', ''])(
    'refuses %j',
    (value) => {
      expect(() => isoDate(value)).toThrow(RangeError);
      expect(() => dateArg(value)).toThrow(InvalidArgumentError);
    },
  );
});

describe('the functions behind the commands use the same validator', () => {
  it('reconcileRange and pullWindow refuse a date that does not exist', async () => {
    // Refused before the database is touched: no database is given.
    await expect(
      reconcileRange(undefined as never, { from: '2026-02-30', to: '2026-03-02' }),
    ).rejects.toThrow(InvalidDateWindow);
    expect(() => pullWindow('2026-02-30', '2026-03-02')).toThrow(
      '--from "2026-02-30" is not a date YYYY-MM-DD',
    );
  });
});

describe('other option values', () => {
  it('whole numbers: digits only, within bounds', () => {
    expect(wholeNumberArg(0)('0')).toBe(0);
    expect(wholeNumberArg(1, 40)('40')).toBe(40);
    for (const bad of ['-1', '1.5', '1e3', ' 2', '']) {
      expect(() => wholeNumberArg(0)(bad), bad).toThrow(InvalidArgumentError);
    }
    expect(() => wholeNumberArg(1, 40)('41')).toThrow('give a whole number from 1 to 40');
  });

  it('instants need a zone', () => {
    expect(instantArg('2026-04-02T12:00:00Z')).toBe('2026-04-02T12:00:00Z');
    expect(() => instantArg('2026-04-02T12:00:00')).toThrow(InvalidArgumentError);
    expect(() => instantArg('2026-02-30T12:00:00Z')).toThrow(InvalidArgumentError);
  });

  it('output files: an existing, writable folder, and not a folder itself', () => {
    expect(outputFileArg(join(dir, 'report.html'))).toBe(join(dir, 'report.html'));
    expect(() => outputFileArg(join(dir, 'missing', 'report.html'))).toThrow(/does not exist/);
    expect(() => outputFileArg(dir)).toThrow(/it is a folder/);
  });
});
