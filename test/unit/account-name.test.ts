import { describe, expect, it } from 'vitest';
import { parseFilter } from '../../reconcile/discrepancies/filter.ts';
import {
  accountOrDefault,
  DEFAULT_ACCOUNT,
  InvalidAccountName,
  parseAccountName,
} from '../../domain/account-name.ts';
import { checkDateWindow, InvalidDateWindow } from '../../domain/time/date-window.ts';
import { pullWindow } from '../../ingest/pull-source.ts';
import { splitWindows } from '../../workflows/windows.ts';

describe('an account name, parsed once where it enters', () => {
  it('takes 1 to 32 of a-z, 0-9 and -, and defaults to default', () => {
    expect(parseAccountName('ca-main')).toBe('ca-main');
    expect(parseAccountName('a'.repeat(32))).toHaveLength(32);
    expect(accountOrDefault(undefined)).toBe(DEFAULT_ACCOUNT);
    expect(DEFAULT_ACCOUNT).toBe('default');
  });

  it('refuses anything else with one error type, not retryable, at every edge', () => {
    for (const bad of ['', 'CA Main', 'a'.repeat(33), 'ca_main', 7]) {
      expect(() => parseAccountName(bad)).toThrow(InvalidAccountName);
    }
    const refused = [
      () => parseAccountName('Ca'),
      () => accountOrDefault('Ca'),
      () => parseFilter({ account: 'Ca' }),
    ].map((f) => {
      try {
        f();
      } catch (error) {
        return error;
      }
      return undefined;
    });
    for (const error of refused) {
      expect(error).toBeInstanceOf(InvalidAccountName);
      expect((error as InvalidAccountName).retryable).toBe(false);
      expect((error as Error).message).toBe(
        'account "Ca" is not an account name: use 1 to 32 of a-z, 0-9 and -',
      );
    }
  });
});

describe('a date window, one check and one error type', () => {
  it('is refused the same way by a pull, the workflows and any caller', () => {
    for (const f of [
      () => pullWindow('2026-02-30', '2026-03-01'),
      () => splitWindows('2026-03-02', '2026-03-01'),
      () => checkDateWindow('2026-03-01', 'x', () => 'bad'),
    ]) {
      expect(f).toThrow(InvalidDateWindow);
    }
    expect(() => checkDateWindow('2026-03-01', '2026-03-01', () => 'bad')).not.toThrow();
  });
});
