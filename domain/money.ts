/**
 * Money to integer cents, with no floating point anywhere: amounts are validated as text (or as JSON
 * integers) and converted only when the result is a safe integer. Invalid input throws a `RangeError`
 * whose message says what is wrong; parsers turn it into a rejected row naming the field.
 */

const DIGITS = /^\d+$/;
const SIGNED_DIGITS = /^-?\d+$/;

export interface ImpliedOptions {
  /** Allow a leading '-' (legacy adjustments carry negative amounts). Default false. */
  readonly signed?: boolean;
}

/**
 * Legacy implied-decimal amount to cents: `'2015'` (20.15) → 2015, `'0000002015'` → 2015.
 * Digits only (with `signed`, one leading '-'): no decimal point, spaces, '+' or exponent.
 * @throws RangeError when the text is empty, holds anything but digits, or exceeds a safe integer.
 */
export function impliedToCents(text: string, options: ImpliedOptions = {}): number {
  if (text === '') throw new RangeError('amount is empty');
  const pattern = options.signed ? SIGNED_DIGITS : DIGITS;
  if (!pattern.test(text)) {
    throw new RangeError(
      `amount '${text}' is not ${options.signed ? 'an optionally negative run of digits' : 'digits only'} (implied decimals: 20.15 is written 2015)`,
    );
  }
  return toSafeCents(text);
}

/**
 * A decimal string of whole cents (CSV report and ledger amounts): digits only → cents.
 * @throws RangeError when the text is empty, holds anything but digits, or exceeds a safe integer.
 */
export function digitsToCents(text: string): number {
  if (text === '') throw new RangeError('amount is empty');
  if (!DIGITS.test(text))
    throw new RangeError(`amount '${text}' is not a whole number of cents (digits only)`);
  return toSafeCents(text);
}

/**
 * A JSON amount that must already be integer cents: a non-negative safe integer number.
 * Rejects 12.5, the string '12', 1e21, negatives, NaN and anything that is not a number.
 * @throws RangeError describing the value.
 */
export function jsonToCents(value: unknown): number {
  if (typeof value !== 'number') {
    throw new RangeError(`amount ${describe(value)} is not a JSON integer number of cents`);
  }
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`amount ${describe(value)} is not a safe integer number of cents`);
  }
  if (value < 0) throw new RangeError(`amount ${value} is negative`);
  return value;
}

function toSafeCents(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount '${text}' is too large to be exact`);
  // Number('-0') is -0: store plain zero.
  return n === 0 ? 0 : n;
}

function describe(value: unknown): string {
  if (typeof value === 'string')
    return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}' (a string)`;
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  return `of type ${Array.isArray(value) ? 'array' : typeof value}`;
}

/**
 * Cents as a plain decimal amount for files (no thousands separators), integer arithmetic only:
 * 123456 → `1234.56`, -5 → `-0.05`; null stays null (an empty CSV cell).
 */
export function centsToDecimal(cents: number | null | undefined): string | null {
  if (cents === null || cents === undefined) return null;
  const abs = Math.abs(cents);
  const units = Math.trunc(abs / 100);
  return `${cents < 0 ? '-' : ''}${units}.${String(abs - units * 100).padStart(2, '0')}`;
}
