import { describe, expect, it } from 'vitest';
import { snakeCased } from '../../domain/snake-cased.ts';

describe('snakeCased', () => {
  it('names the fields in snake_case, and a field left out or undefined null', () => {
    const record: { amountCents: number; runId?: number | null; toleranceVersion?: number; by: string } = {
      amountCents: -3,
      toleranceVersion: undefined,
      by: 'ada',
    };
    expect(snakeCased(record, ['amountCents', 'runId', 'toleranceVersion', 'by'])).toStrictEqual({
      amount_cents: -3,
      run_id: null,
      tolerance_version: null,
      by: 'ada',
    });
  });

  it('keeps a false, zero or empty value, and only the fields named', () => {
    const r = { isLate: false, rowCount: 0, note: '', other: 'x' };
    expect(snakeCased(r, ['isLate', 'rowCount', 'note'])).toStrictEqual({
      is_late: false,
      row_count: 0,
      note: '',
    });
  });
});
