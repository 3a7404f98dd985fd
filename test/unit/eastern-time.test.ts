import { afterAll, describe, expect, it } from 'vitest';
import {
  clearEasternCaches,
  easternDateOf,
  easternDayStartUtc,
  easternToUtc,
} from '../../domain/time/eastern.ts';
import { normaliseDate } from '../../domain/time/calendar.ts';
import { normaliseInstant } from '../../domain/time/iso-instant.ts';

// Node honours process.env.TZ changes at runtime: every assertion runs under hosts east and west of UTC,
// so a result that depended on the host zone would fail in at least one of them.
const HOST_ZONES = ['UTC', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Auckland', 'America/Toronto'];
const LOCAL_NOON_HOUR: Record<string, number> = {
  UTC: 12,
  'America/Los_Angeles': 5,
  'Asia/Kolkata': 17,
  'Pacific/Auckland': 0,
  'America/Toronto': 8,
};
const originalTz = process.env.TZ;
afterAll(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

for (const zone of HOST_ZONES) {
  describe(`easternToUtc with host TZ=${zone}`, () => {
    const withZone = <T>(fn: () => T): T => {
      process.env.TZ = zone;
      clearEasternCaches();
      // Sanity: the host zone really changed (Date's local methods follow it).
      expect(new Date('2026-07-01T12:00:00Z').getHours()).toBe(LOCAL_NOON_HOUR[zone]);
      return fn();
    };

    it('converts ordinary winter and summer times', () => {
      withZone(() => {
        expect(easternToUtc('20260115', '093000')).toEqual({
          utc: '2026-01-15T14:30:00.000000Z',
          flag: null,
        });
        expect(easternToUtc('2026-07-01', '235959')).toEqual({
          utc: '2026-07-02T03:59:59.000000Z',
          flag: null,
        });
        expect(easternToUtc('20261231', '190000')).toEqual({
          utc: '2027-01-01T00:00:00.000000Z',
          flag: null,
        });
      });
    });

    it('handles the March 8 2026 spring-forward: the skipped hour moves forward and is flagged', () => {
      withZone(() => {
        expect(easternToUtc('20260308', '015959')).toEqual({
          utc: '2026-03-08T06:59:59.000000Z',
          flag: null,
        });
        expect(easternToUtc('20260308', '020000')).toEqual({
          utc: '2026-03-08T07:00:00.000000Z',
          flag: 'dst_gap',
        });
        expect(easternToUtc('20260308', '023000')).toEqual({
          utc: '2026-03-08T07:30:00.000000Z',
          flag: 'dst_gap',
        });
        expect(easternToUtc('20260308', '025959')).toEqual({
          utc: '2026-03-08T07:59:59.000000Z',
          flag: 'dst_gap',
        });
        expect(easternToUtc('20260308', '030000')).toEqual({
          utc: '2026-03-08T07:00:00.000000Z',
          flag: null,
        });
        expect(easternToUtc('20260308', '120000')).toEqual({
          utc: '2026-03-08T16:00:00.000000Z',
          flag: null,
        });
        expect(easternToUtc('20260307', '023000')).toEqual({
          utc: '2026-03-07T07:30:00.000000Z',
          flag: null,
        });
      });
    });

    it('handles the November 1 2026 fall-back: the repeated hour takes the earlier (daylight) offset', () => {
      withZone(() => {
        expect(easternToUtc('20261101', '005959')).toEqual({
          utc: '2026-11-01T04:59:59.000000Z',
          flag: null,
        });
        expect(easternToUtc('20261101', '010000')).toEqual({
          utc: '2026-11-01T05:00:00.000000Z',
          flag: 'dst_fold',
        });
        expect(easternToUtc('20261101', '013000')).toEqual({
          utc: '2026-11-01T05:30:00.000000Z',
          flag: 'dst_fold',
        });
        expect(easternToUtc('20261101', '015959')).toEqual({
          utc: '2026-11-01T05:59:59.000000Z',
          flag: 'dst_fold',
        });
        expect(easternToUtc('20261101', '020000')).toEqual({
          utc: '2026-11-01T07:00:00.000000Z',
          flag: null,
        });
        expect(easternToUtc('20261102', '013000')).toEqual({
          utc: '2026-11-02T06:30:00.000000Z',
          flag: null,
        });
      });
    });

    it('gives the UTC start of Eastern days, including transition days', () => {
      withZone(() => {
        expect(easternDayStartUtc('2026-03-08')).toBe('2026-03-08T05:00:00.000000Z');
        expect(easternDayStartUtc('2026-03-09')).toBe('2026-03-09T04:00:00.000000Z');
        expect(easternDayStartUtc('2026-11-01')).toBe('2026-11-01T04:00:00.000000Z');
        expect(easternDayStartUtc('2026-11-02')).toBe('2026-11-02T05:00:00.000000Z');
        expect(easternToUtc('20260308', null)).toEqual({ utc: '2026-03-08T05:00:00.000000Z', flag: null });
      });
    });

    it('gives the Eastern date of UTC instants around midnight and the transitions', () => {
      withZone(() => {
        expect(easternDateOf('2026-03-08T04:59:59.999999Z')).toBe('2026-03-07');
        expect(easternDateOf('2026-03-08T05:00:00.000000Z')).toBe('2026-03-08');
        expect(easternDateOf('2026-03-09T03:59:59Z')).toBe('2026-03-08');
        expect(easternDateOf('2026-03-09T04:00:00Z')).toBe('2026-03-09');
        expect(easternDateOf('2026-11-01T03:59:59.5Z')).toBe('2026-10-31');
        expect(easternDateOf('2026-11-01T04:00:00Z')).toBe('2026-11-01');
        expect(easternDateOf('2026-11-02T04:59:59Z')).toBe('2026-11-01');
        expect(easternDateOf('2026-11-02T05:00:00Z')).toBe('2026-11-02');
        expect(easternDateOf('2026-11-02T00:30:00-05:00')).toBe('2026-11-02');
      });
    });
  });
}

describe('date and time validation', () => {
  it('refuses dates that do not exist, with the value in the message', () => {
    expect(() => easternToUtc('20260230', '120000')).toThrow(
      new RangeError("date '20260230' does not exist"),
    );
    expect(() => easternToUtc('20261301', '120000')).toThrow("date '20261301' does not exist");
    expect(() => easternToUtc('20260001', null)).toThrow("date '20260001' does not exist");
    expect(() => easternToUtc('2026030', '120000')).toThrow("date '2026030' is not YYYYMMDD or YYYY-MM-DD");
    expect(() => easternDayStartUtc('2026-02-29')).toThrow("date '2026-02-29' does not exist");
    expect(normaliseDate('20240229')).toBe('2024-02-29');
    expect(() => normaliseDate('19000229')).toThrow('does not exist');
    expect(normaliseDate('20000229')).toBe('2000-02-29');
  });

  it('refuses times that do not exist or are malformed', () => {
    expect(() => easternToUtc('20260308', '240000')).toThrow("time '240000' does not exist");
    expect(() => easternToUtc('20260308', '126000')).toThrow("time '126000' does not exist");
    expect(() => easternToUtc('20260308', '12:00:00')).toThrow("time '12:00:00' is not HHMMSS");
    expect(() => easternToUtc('20260308', '')).toThrow("time '' is not HHMMSS");
  });

  it('refuses instants that are not ISO-8601 with a zone', () => {
    expect(() => easternDateOf('2026-03-08 12:00')).toThrow('is not ISO-8601');
    expect(() => easternDateOf('2026-03-08T12:00:00')).toThrow('is not ISO-8601');
    expect(() => easternDateOf('2026-02-30T12:00:00Z')).toThrow('does not exist');
  });
});

describe('normaliseInstant', () => {
  it('keeps microseconds without going through Date', () => {
    expect(normaliseInstant('2026-03-08T07:30:00.123456Z')).toBe('2026-03-08T07:30:00.123456Z');
    expect(normaliseInstant('2026-03-08T07:30:00.1Z')).toBe('2026-03-08T07:30:00.100000Z');
    expect(normaliseInstant('2026-03-08T07:30:00Z')).toBe('2026-03-08T07:30:00.000000Z');
    expect(normaliseInstant('2026-03-08T07:30:00.123456000Z')).toBe('2026-03-08T07:30:00.123456Z');
    expect(normaliseInstant('2026-03-08 07:30:00.000001')).toBe('2026-03-08T07:30:00.000001Z');
  });

  it('converts offsets to UTC, across day and year boundaries', () => {
    expect(normaliseInstant('2026-12-31T20:00:00.999999-05:00')).toBe('2027-01-01T01:00:00.999999Z');
    expect(normaliseInstant('2026-03-08T03:00:00+0530')).toBe('2026-03-07T21:30:00.000000Z');
    expect(normaliseInstant('2026-03-08T03:00:00-04')).toBe('2026-03-08T07:00:00.000000Z');
  });

  it('refuses what it cannot represent exactly or unambiguously', () => {
    expect(() => normaliseInstant('2026-03-08T07:30:00.1234567Z')).toThrow('more precise than a microsecond');
    expect(() => normaliseInstant('2026-02-30T00:00:00Z')).toThrow('is not a date-time that exists');
    expect(() => normaliseInstant('2026-03-08T07:30:00', { requireZone: true })).toThrow('has no time zone');
    expect(() => normaliseInstant('08/03/2026 07:30')).toThrow('is not an ISO-8601 date-time');
  });
});

describe('against a brute-force reading of the zone', () => {
  // Reference: the wall clock of America/Toronto at a UTC instant, straight from Intl.
  const wall = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/Toronto',
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const wallOf = (ms: number) => wall.format(ms).replace(', ', 'T');

  it('every quarter hour of 2026 and 2027 maps back to its wall clock, flags only at transitions', () => {
    clearEasternCaches();
    const flagged: string[] = [];
    for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2028, 0, 1); ms += 15 * 60_000) {
      const local = new Date(ms).toISOString();
      const date = local.slice(0, 10);
      const time = `${local.slice(11, 13)}${local.slice(14, 16)}00`;
      const { utc, flag } = easternToUtc(date, time);
      const back = wallOf(Date.parse(utc));
      if (flag === 'dst_gap') {
        flagged.push(`${date} ${time} gap`);
        // Moved forward by the gap: the wall clock reads one hour later.
        expect(back.slice(11, 13)).toBe(String(Number(time.slice(0, 2)) + 1).padStart(2, '0'));
      } else {
        expect(back).toBe(`${date}T${time.slice(0, 2)}:${time.slice(2, 4)}:00`);
        if (flag === 'dst_fold') {
          flagged.push(`${date} ${time} fold`);
          // The earlier of the two instants: one hour later reads the same wall clock.
          expect(wallOf(Date.parse(utc) + 3_600_000)).toBe(back);
        }
      }
      expect(easternDateOf(utc)).toBe(back.slice(0, 10));
    }
    expect(flagged).toEqual([
      ...['0200', '0215', '0230', '0245'].map((t) => `2026-03-08 ${t}00 gap`),
      ...['0100', '0115', '0130', '0145'].map((t) => `2026-11-01 ${t}00 fold`),
      ...['0200', '0215', '0230', '0245'].map((t) => `2027-03-14 ${t}00 gap`),
      ...['0100', '0115', '0130', '0145'].map((t) => `2027-11-07 ${t}00 fold`),
    ]);
  });
});
