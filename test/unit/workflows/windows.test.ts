import { describe, expect, it } from 'vitest';
import { addDays, daysInclusive, isValidDate } from '../../../domain/time/calendar.ts';
import { easternDateOfMs } from '../../../domain/time/eastern.ts';
import { backfillWorkflowId, splitWindows, windowWorkflowId } from '../../../workflows/windows.ts';

describe('splitWindows', () => {
  it('gives one window for a single day', () => {
    expect(splitWindows('2026-03-08', '2026-03-08')).toEqual([{ from: '2026-03-08', to: '2026-03-08' }]);
  });

  it('keeps exactly 40 days in one window', () => {
    expect(splitWindows('2026-01-01', '2026-02-09')).toEqual([{ from: '2026-01-01', to: '2026-02-09' }]);
    expect(daysInclusive('2026-01-01', '2026-02-09')).toBe(40);
  });

  it('splits 41 days into 40 + 1', () => {
    expect(splitWindows('2026-01-01', '2026-02-10')).toEqual([
      { from: '2026-01-01', to: '2026-02-09' },
      { from: '2026-02-10', to: '2026-02-10' },
    ]);
  });

  it('counts 29 February in a leap year and not in others', () => {
    expect(splitWindows('2028-02-01', '2028-03-15')).toEqual([
      { from: '2028-02-01', to: '2028-03-11' },
      { from: '2028-03-12', to: '2028-03-15' },
    ]);
    expect(splitWindows('2027-02-01', '2027-03-15')).toEqual([
      { from: '2027-02-01', to: '2027-03-12' },
      { from: '2027-03-13', to: '2027-03-15' },
    ]);
    expect(daysInclusive('2028-02-28', '2028-03-01')).toBe(3);
    expect(daysInclusive('2100-02-28', '2100-03-01')).toBe(2);
  });

  it('counts calendar days across the DST changes (23- and 25-hour days are one day each)', () => {
    // 2026-03-08 (spring forward) and 2026-11-01 (fall back) in America/Toronto.
    expect(splitWindows('2026-03-01', '2026-03-15', 7)).toEqual([
      { from: '2026-03-01', to: '2026-03-07' },
      { from: '2026-03-08', to: '2026-03-14' },
      { from: '2026-03-15', to: '2026-03-15' },
    ]);
    expect(daysInclusive('2026-10-25', '2026-11-07')).toBe(14);
  });

  it('covers 7 months in contiguous windows of at most 40 days with no gap or overlap', () => {
    const windows = splitWindows('2026-01-01', '2026-07-31');
    expect(windows.map((w) => `${w.from}..${w.to}`)).toEqual([
      '2026-01-01..2026-02-09',
      '2026-02-10..2026-03-21',
      '2026-03-22..2026-04-30',
      '2026-05-01..2026-06-09',
      '2026-06-10..2026-07-19',
      '2026-07-20..2026-07-31',
    ]);
    for (let i = 1; i < windows.length; i++) {
      expect(addDays(windows[i - 1]!.to, 1)).toBe(windows[i]!.from);
    }
  });

  it('crosses a year end', () => {
    expect(splitWindows('2025-12-20', '2026-01-31')).toEqual([
      { from: '2025-12-20', to: '2026-01-28' },
      { from: '2026-01-29', to: '2026-01-31' },
    ]);
  });

  it('refuses reversed ranges, impossible dates and window sizes beyond 40', () => {
    expect(() => splitWindows('2026-02-01', '2026-01-31')).toThrow(
      'from 2026-02-01 is after to 2026-01-31: give the earlier date first',
    );
    expect(() => splitWindows('2026-02-30', '2026-03-01')).toThrow(
      'from "2026-02-30" is not a date: write it YYYY-MM-DD',
    );
    expect(() => splitWindows('2026-01-01', '2026-01-31', 41)).toThrow(
      'window size 41 is not valid: use a whole number of days from 1 to 40',
    );
    expect(() => splitWindows('2026-01-01', '2026-01-31', 0)).toThrow('window size 0 is not valid');
  });
});

describe('dates and ids', () => {
  it('validates calendar dates', () => {
    expect(isValidDate('2028-02-29')).toBe(true);
    expect(isValidDate('2027-02-29')).toBe(false);
    expect(isValidDate('20260101')).toBe(false);
  });

  it('moves days across month and year ends', () => {
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2028-03-01', -1)).toBe('2028-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });

  it('derives workflow ids from the range and the window', () => {
    expect(backfillWorkflowId('2026-01-01', '2026-07-31')).toBe('backfill-2026-01-01-2026-07-31');
    expect(windowWorkflowId({ from: '2026-01-01', to: '2026-02-09' })).toBe('window-2026-01-01-2026-02-09');
  });

  it('finds the Eastern day of an instant, on both sides of midnight and of the DST changes', () => {
    expect(easternDateOfMs(new Date('2026-03-08T04:59:59Z').getTime())).toBe('2026-03-07'); // 23:59:59 EST
    expect(easternDateOfMs(new Date('2026-03-08T05:00:00Z').getTime())).toBe('2026-03-08'); // 00:00 EST
    expect(easternDateOfMs(new Date('2026-03-09T03:59:59Z').getTime())).toBe('2026-03-08'); // 23:59:59 EDT
    expect(easternDateOfMs(new Date('2026-03-09T04:00:00Z').getTime())).toBe('2026-03-09');
    expect(easternDateOfMs(new Date('2026-11-02T04:59:59Z').getTime())).toBe('2026-11-01'); // 23:59:59 EST after fall back
    expect(easternDateOfMs(new Date('2026-07-15T06:30:00Z').getTime())).toBe('2026-07-15'); // 02:30 EDT nightly
  });
});
