import { describe, expect, it } from 'vitest';
import { DEFAULT_VOLUME_SETTINGS, loadVolumeSettings } from '../../config/volume.ts';
import { loadConfig } from '../../config/config.ts';
import { businessDaysBefore } from '../../domain/time/business-days.ts';
import { isLow, judgeVolume, median, type SourceDays } from '../../reconcile/volume/judge-volume.ts';

/** The pure part of the low-volume check: the median, the threshold, and which days are judged. */
function source(rows: Record<string, number>, loaded: string[], firstDataDay: string | null): SourceDays {
  return {
    source: 'report-transactions',
    rows: new Map(Object.entries(rows)),
    loaded: new Set(loaded),
    firstDataDay,
  };
}

describe('the usual figure', () => {
  it('is the median of whole numbers, the two middle values averaged down', () => {
    expect(median([5])).toBe(5);
    expect(median([9, 1, 5])).toBe(5);
    expect(median([1, 2, 4, 100])).toBe(3);
    expect(median([0, 0, 0, 1000])).toBe(0);
  });

  it('counts business days back over weekends and Canadian bank holidays', () => {
    // Good Friday 2026-04-03 and the weekend are skipped.
    expect(businessDaysBefore('2026-04-07', 3)).toEqual(['2026-04-01', '2026-04-02', '2026-04-06']);
  });

  it('flags below the percentage of a usual figure large enough, in integers', () => {
    const s = DEFAULT_VOLUME_SETTINGS;
    expect(isLow(2, 12, s)).toBe(true);
    expect(isLow(3, 12, s)).toBe(false); // 300 < 300 is false: exactly a quarter is not low
    expect(isLow(0, 9, s)).toBe(false); // below RECON_VOLUME_MIN_USUAL_ROWS
    expect(isLow(0, 10, s)).toBe(true);
  });
});

describe('judgeVolume', () => {
  const week = ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06'];
  const settings = { ...DEFAULT_VOLUME_SETTINGS, baselineDays: 4, minHistoryDays: 3 };

  it('ignores days before the first data, unloaded days, weekends, and days with too little history', () => {
    const s = source(
      { '2026-03-03': 40, '2026-03-04': 40, '2026-03-05': 40 },
      [...week, '2026-03-07', '2026-03-09'],
      '2026-03-03',
    );
    const judged = judgeVolume(s, [...week, '2026-03-07', '2026-03-09', '2026-03-10'], settings);
    // 03-02 is before the first data; 03-03..03-05 lack 3 loaded days of history; 03-07 is a Saturday;
    // 03-10 was not loaded. 03-06 and 03-09 are judged against 03-03..03-05 (and 03-06).
    expect(judged).toEqual([
      {
        source: 'report-transactions',
        day: '2026-03-06',
        rows: 0,
        usualRows: 40,
        baselineDays: 3,
        low: true,
      },
      {
        source: 'report-transactions',
        day: '2026-03-09',
        rows: 0,
        usualRows: 40,
        baselineDays: 4,
        low: true,
      },
    ]);
  });

  it('judges nothing for a source with no data, or when RECON_VOLUME_LOW_PERCENT is 0', () => {
    expect(judgeVolume(source({}, week, null), week, settings)).toEqual([]);
    const s = source({ '2026-03-02': 9, '2026-03-03': 9, '2026-03-04': 9 }, week, '2026-03-02');
    expect(judgeVolume(s, week, { ...settings, lowPercent: 0 })).toEqual([]);
  });
});

describe('RECON_VOLUME_* settings', () => {
  it('default to a 20-business-day median, 5 days of history, 10 rows, 25 %', () => {
    expect(loadConfig({}).volume).toEqual({
      baselineDays: 20,
      minHistoryDays: 5,
      minUsualRows: 10,
      lowPercent: 25,
    });
    expect(
      loadVolumeSettings({
        RECON_VOLUME_BASELINE_DAYS: '10',
        RECON_VOLUME_MIN_HISTORY_DAYS: '10',
        RECON_VOLUME_MIN_USUAL_ROWS: '100',
        RECON_VOLUME_LOW_PERCENT: '50',
      }),
    ).toEqual({ baselineDays: 10, minHistoryDays: 10, minUsualRows: 100, lowPercent: 50 });
  });

  it('refuses malformed values by name', () => {
    expect(() => loadConfig({ RECON_VOLUME_LOW_PERCENT: '150' })).toThrow(
      'RECON_VOLUME_LOW_PERCENT="150" is not a percentage: set it to a whole number from 0 to 100, or unset it (default 25)',
    );
    expect(() =>
      loadVolumeSettings({ RECON_VOLUME_BASELINE_DAYS: '5', RECON_VOLUME_MIN_HISTORY_DAYS: '6' }),
    ).toThrow(
      /RECON_VOLUME_MIN_HISTORY_DAYS="6" is not a number of business days within RECON_VOLUME_BASELINE_DAYS/,
    );
  });
});
