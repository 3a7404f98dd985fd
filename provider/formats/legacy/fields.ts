import { impliedToCents } from '../../../domain/money.ts';
import { normaliseDate } from '../../../domain/time/calendar.ts';
import { countryProblem } from '../field-forms.ts';
import { splitCsvLine } from '../read-lines.ts';

/** Checks and conversions of single legacy fields; a failure is a FieldProblem, which rejects the row. */

/** A field of a legacy layout (docs/provider-interface.md 4.4): its size and how messages name it. */
export interface FieldSpec {
  readonly size: number;
  readonly label: string;
}

const CURRENCY = /^[A-Z]{3}$/;

/** Rejection of one field; caught per row and turned into a rejected row. */
export class FieldProblem extends Error {}

export function split(raw: string): string[] {
  const fields = splitCsvLine(raw);
  if (fields === null) throw new FieldProblem('unbalanced double quote in the line');
  return fields;
}

export function checkCount(fields: string[], expected: number, what: string): void {
  if (fields.length !== expected) {
    throw new FieldProblem(`expected ${expected} fields (${what}), found ${fields.length}`);
  }
}

export function checkSize(n: number, spec: FieldSpec, value: string): void {
  if (value.length > spec.size) {
    throw new FieldProblem(
      `field ${n} (${spec.label}) is ${value.length} characters long; the limit is ${spec.size}`,
    );
  }
}

export function nonEmpty(n: number, spec: FieldSpec, value: string): string {
  if (value === '') throw new FieldProblem(`field ${n} (${spec.label}) is empty`);
  return value;
}

export function orNull(value: string): string | null {
  return value === '' ? null : value;
}

export function date(n: number, spec: FieldSpec, value: string): string {
  if (!/^\d{8}$/.test(value)) throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not YYYYMMDD`);
  try {
    return normaliseDate(value);
  } catch {
    throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not a date that exists`);
  }
}

export function optionalDate(n: number, spec: FieldSpec, value: string): string | null {
  return value === '' ? null : date(n, spec, value);
}

export function cents(n: number, spec: FieldSpec, value: string, signed = false): number {
  try {
    return impliedToCents(value, { signed });
  } catch (error) {
    throw new FieldProblem(`field ${n} (${spec.label}): ${(error as Error).message}`);
  }
}

/** Cents as {@link cents} reads them, or null for an empty field. */
export function optionalCents(n: number, spec: FieldSpec, value: string, signed = false): number | null {
  return value === '' ? null : cents(n, spec, value, signed);
}

export function currency(n: number, spec: FieldSpec, value: string): string {
  if (!CURRENCY.test(value)) {
    throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not three uppercase letters (ISO 4217)`);
  }
  return value;
}

/** An uppercase ISO 3166 country code (docs/provider-interface.md 4.4: fields of size 2), or empty. */
export function country(n: number, spec: FieldSpec, value: string): string | null {
  const problem = countryProblem(`field ${n} (${spec.label})`, orNull(value));
  if (problem !== null) throw new FieldProblem(problem);
  return orNull(value);
}

/**
 * Transaction field 17: `xxx-xxxxx-x…` (institution 3, transit 5, account up to 24), of which only the
 * last 4 digits are shown (docs/provider-interface.md 4.4). The masking character is not shown, so any is taken; the four
 * digits at the end are what tells a whole value from one cut short.
 */
const BANK_ACCOUNT = /^[^,-]{3}-[^,-]{5}-[^,-]{0,20}[0-9]{4}$/;

export function bankAccount(n: number, spec: FieldSpec, value: string): string | null {
  if (value !== '' && !BANK_ACCOUNT.test(value)) {
    // The value is personal data: its form is named, never the value.
    throw new FieldProblem(
      `field ${n} (${spec.label}) is not of the form xxx-xxxxx-…1234 (ending in the account's last 4 digits)`,
    );
  }
  return orNull(value);
}
