import { describe, expect, it } from 'vitest';
import {
  addBusinessDays,
  businessDaysBetween,
  canadianBankHolidays,
  isBusinessDay,
} from '../../domain/time/business-days.ts';
import { contractedFeeCents } from '../../domain/fee-schedule.ts';

describe('Canadian bank-holiday calendar', () => {
  it('lists the holidays of 2026 with their observed days', () => {
    expect([...canadianBankHolidays(2026).entries()]).toEqual([
      ['2026-01-01', "New Year's Day"],
      ['2026-04-03', 'Good Friday'],
      ['2026-05-18', 'Victoria Day'],
      ['2026-07-01', 'Canada Day'],
      ['2026-08-03', 'Civic Holiday'],
      ['2026-09-07', 'Labour Day'],
      ['2026-09-30', 'National Day for Truth and Reconciliation'],
      ['2026-10-12', 'Thanksgiving'],
      ['2026-11-11', 'Remembrance Day'],
      ['2026-12-25', 'Christmas Day'],
      ['2026-12-28', 'Boxing Day'], // the 26th is a Saturday
    ]);
  });

  it('moves weekend holidays to the next free weekday', () => {
    // 2021: Christmas Saturday -> Monday 27th, Boxing Day Sunday -> Tuesday 28th; Canada Day Thursday.
    const h2021 = canadianBankHolidays(2021);
    expect(h2021.get('2021-12-27')).toBe('Christmas Day');
    expect(h2021.get('2021-12-28')).toBe('Boxing Day');
    // 2022: New Year on Saturday -> Monday 3 January; Christmas Sunday -> Monday 26th (Boxing Day then 27th).
    const h2022 = canadianBankHolidays(2022);
    expect(h2022.get('2022-01-03')).toBe("New Year's Day");
    expect(h2022.get('2022-12-26')).toBe('Christmas Day');
    expect(h2022.get('2022-12-27')).toBe('Boxing Day');
    // No Truth and Reconciliation day before 2021; Civic Holiday optional.
    expect([...canadianBankHolidays(2020).values()]).not.toContain(
      'National Day for Truth and Reconciliation',
    );
    expect(canadianBankHolidays(2026, { civicHoliday: false }).has('2026-08-03')).toBe(false);
  });

  it('counts business days across Easter and weekends', () => {
    expect(isBusinessDay('2026-04-03')).toBe(false); // Good Friday
    expect(isBusinessDay('2026-04-06')).toBe(true); // Easter Monday is not a bank holiday
    expect(addBusinessDays('2026-04-02', 2)).toBe('2026-04-07');
    expect(businessDaysBetween('2026-04-02', '2026-04-06')).toBe(1);
    expect(businessDaysBetween('2026-04-02', '2026-04-02')).toBe(0);
    expect(addBusinessDays('2026-12-24', 1)).toBe('2026-12-29');
  });
});

describe('contracted fees', () => {
  it('is fixed cents plus basis points, rounded as the contract says, in integers', () => {
    expect(contractedFeeCents(5000, { fixedCents: 20, basisPoints: 15 })).toBe(28); // 7.5 rounds up
    expect(contractedFeeCents(5000, { fixedCents: 20, basisPoints: 15, rounding: 'floor' })).toBe(27);
    expect(contractedFeeCents(100_000_000, { fixedCents: 25, basisPoints: 30, rounding: 'floor' })).toBe(
      300_025,
    );
    expect(contractedFeeCents(9_007_199_254_740_991, { fixedCents: 0, basisPoints: 10_000 })).toBe(
      9_007_199_254_740_991,
    );
    expect(() => contractedFeeCents(-1, { fixedCents: 0, basisPoints: 1 })).toThrow(RangeError);
  });
});
