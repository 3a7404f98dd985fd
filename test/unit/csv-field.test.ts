import { describe, expect, it } from 'vitest';
import { csvField } from '../../domain/csv-field.ts';

describe('csvField (report and workbench CSV exports)', () => {
  it.each([
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+1 555', "'+1 555"],
    ['-cmd', "'-cmd"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tlooks blank', "'\tlooks blank"],
    ['\rline', `"'\rline"`],
  ])('makes %j inert for spreadsheets', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('keeps numbers, negative cents included, and writes objects as JSON', () => {
    expect(csvField(-500)).toBe('-500');
    expect(csvField('-500')).toBe('-500');
    expect(csvField(0)).toBe('0');
    expect(csvField({ amount_cents: 5 })).toBe('"{""amount_cents"":5}"');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField('checked, "ok"')).toBe('"checked, ""ok"""');
  });
});
