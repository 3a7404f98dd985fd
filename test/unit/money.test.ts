import { describe, expect, it } from 'vitest';
import { digitsToCents, impliedToCents, jsonToCents } from '../../domain/money.ts';

describe('impliedToCents', () => {
  it('reads implied decimals as cents', () => {
    expect(impliedToCents('2015')).toBe(2015);
    expect(impliedToCents('0000002015')).toBe(2015);
    expect(impliedToCents('0')).toBe(0);
    expect(impliedToCents('9999999999')).toBe(9_999_999_999);
  });

  it('accepts a leading minus only when signed (adjustments)', () => {
    expect(impliedToCents('-0000001500', { signed: true })).toBe(-1500);
    expect(Object.is(impliedToCents('-0', { signed: true }), 0)).toBe(true);
    expect(() => impliedToCents('-1500')).toThrow(
      "amount '-1500' is not digits only (implied decimals: 20.15 is written 2015)",
    );
  });

  it('rejects anything but digits, with the reason', () => {
    for (const bad of ['20.15', ' 2015', '2015 ', '+2015', '1e3', '20,15', 'abc', '--1', '0x10']) {
      expect(() => impliedToCents(bad), bad).toThrow(`amount '${bad}' is not digits only`);
    }
    expect(() => impliedToCents('-', { signed: true })).toThrow(
      'is not an optionally negative run of digits',
    );
    expect(() => impliedToCents('')).toThrow('amount is empty');
    expect(() => impliedToCents('99999999999999999')).toThrow(
      "amount '99999999999999999' is too large to be exact",
    );
  });
});

describe('digitsToCents', () => {
  it('reads whole cents', () => {
    expect(digitsToCents('150000')).toBe(150000);
    expect(() => digitsToCents('1500.00')).toThrow(
      "amount '1500.00' is not a whole number of cents (digits only)",
    );
    expect(() => digitsToCents('')).toThrow('amount is empty');
  });
});

describe('jsonToCents', () => {
  it('accepts safe non-negative integers only', () => {
    expect(jsonToCents(2015)).toBe(2015);
    expect(jsonToCents(0)).toBe(0);
    expect(jsonToCents(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => jsonToCents(12.5)).toThrow('amount 12.5 is not a safe integer number of cents');
    expect(() => jsonToCents('12')).toThrow("amount '12' (a string) is not a JSON integer number of cents");
    expect(() => jsonToCents(1e21)).toThrow('amount 1e+21 is not a safe integer number of cents');
    expect(() => jsonToCents(-5)).toThrow('amount -5 is negative');
    expect(() => jsonToCents(null)).toThrow('amount null is not a JSON integer number of cents');
    expect(() => jsonToCents(Number.NaN)).toThrow('amount NaN is not a safe integer');
    expect(() => jsonToCents([1])).toThrow('amount of type array is not a JSON integer');
  });
});
