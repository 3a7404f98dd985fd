import { describe, expect, it } from 'vitest';
import { InvalidPullWindow, LEGACY_TRANSACTION_FIELDS, pullWindow } from '../../ingest/pull-source.ts';

describe('pull window', () => {
  it('is the Eastern days from..to as a UTC half-open window, across DST changes', () => {
    expect(pullWindow('2026-11-01', '2026-11-01')).toEqual({
      start: '2026-11-01T04:00:00.000000Z',
      end: '2026-11-02T05:00:00.000000Z',
      days: 1,
    });
    expect(pullWindow('2026-03-01', '2026-03-09')).toEqual({
      start: '2026-03-01T05:00:00.000000Z',
      end: '2026-03-10T04:00:00.000000Z',
      days: 9,
    });
    expect(pullWindow('2026-01-01', '2026-02-09').days).toBe(40);
  });

  it('refuses bad dates and more than 40 days, not retryable', () => {
    const refused = (from: string, to: string) => {
      try {
        pullWindow(from, to);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidPullWindow);
        expect((error as InvalidPullWindow).retryable).toBe(false);
        return (error as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(refused('2026-01-01', '2026-02-10')).toBe(
      '2026-01-01..2026-02-10 spans 41 days; a pull covers at most 40 (use recon backfill for longer ranges)',
    );
    expect(refused('2026-02-10', '2026-02-09')).toBe('--to 2026-02-09 is before --from 2026-02-10');
    expect(refused('2026-02-30', '2026-03-01')).toBe('--from "2026-02-30" is not a date YYYY-MM-DD');
    expect(refused('2026-03-01', '03/02/2026')).toBe('--to "03/02/2026" is not a date YYYY-MM-DD');
  });

  it('asks legacy type 5 for every field it allows', () => {
    expect(LEGACY_TRANSACTION_FIELDS).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 22,
    ]);
  });
});
