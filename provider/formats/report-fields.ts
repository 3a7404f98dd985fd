/**
 * Field conversions shared by the JSON and CSV report parsers. Each throws {@link FieldProblem} with a
 * reason naming the field; the parsers turn it into a rejected row.
 */

import { digitsToCents, jsonToCents } from '../../domain/money.ts';
import type { CanonicalStatus } from '../../domain/records.ts';
import { normaliseDate } from '../../domain/time/calendar.ts';
import { normaliseInstant } from '../../domain/time/iso-instant.ts';

export class FieldProblem extends Error {}

const CURRENCY = /^[A-Z]{3}$/;

/** Report transaction status (docs/provider-interface.md 2.2/4.1): SUCCESSFUL, PENDING, REJECTED; anything else has no known meaning. */
export function reportStatus(raw: string): CanonicalStatus | null {
  return raw === 'SUCCESSFUL' || raw === 'PENDING' || raw === 'REJECTED' ? raw : null;
}

/** DEBIT or CREDIT; anything else has no known meaning (raw kept beside it). */
export function transactionType(raw: string): 'DEBIT' | 'CREDIT' | null {
  return raw === 'DEBIT' || raw === 'CREDIT' ? raw : null;
}

export function requiredText(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new FieldProblem(
      `${field} is ${value === undefined ? 'missing' : value === '' ? 'empty' : describe(value)}; a non-empty string is required`,
    );
  }
  return value;
}

/** An optional text field: absent, null or '' → null; numbers are kept as their JSON text. */
export function optionalText(field: string, value: unknown): string | null {
  if (isAbsent(value)) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new FieldProblem(`${field} is ${describe(value)}; a string is expected`);
}

export function currencyOf(field: string, value: unknown): string {
  if (typeof value !== 'string' || !CURRENCY.test(value)) {
    throw new FieldProblem(`${field} ${describe(value)} is not three uppercase letters (ISO 4217)`);
  }
  return value;
}

/** An amount whose text is not an integer literal (`1.0000000000000001`, `100.0`, `1e2`, `-0`). */
export class NonIntegerLiteral {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

/** JSON amount: integer cents, written as an integer literal. */
export function jsonCents(field: string, value: unknown): number {
  if (value instanceof NonIntegerLiteral) {
    const text = value.source.length > 40 ? `${value.source.slice(0, 40)}…` : value.source;
    throw new FieldProblem(`${field}: amount ${text} is not written as an integer number of cents`);
  }
  return asField(field, () => jsonToCents(value));
}

export function optionalJsonCents(field: string, value: unknown): number | null {
  return value === undefined || value === null ? null : jsonCents(field, value);
}

/** CSV amount: whole cents written as digits. */
export function csvCents(field: string, value: string): number {
  return asField(field, () => digitsToCents(value));
}

export function optionalCsvCents(field: string, value: string): number | null {
  return value === '' ? null : csvCents(field, value);
}

/** An instant, normalised to `YYYY-MM-DDTHH:MM:SS.ffffffZ` (a value without zone is UTC, as the spec says). */
export function instant(field: string, value: unknown): string {
  if (typeof value !== 'string')
    throw new FieldProblem(`${field} is ${describe(value)}; an ISO-8601 UTC date-time is required`);
  return asField(field, () => normaliseInstant(value));
}

export function optionalInstant(field: string, value: unknown): string | null {
  return isAbsent(value) ? null : instant(field, value);
}

/** A date given as `YYYY-MM-DD` (or `YYYYMMDD`); anything else, or a date that does not exist, is refused. */
export function dateOf(field: string, value: unknown): string {
  if (typeof value !== 'string')
    throw new FieldProblem(`${field} is ${describe(value)}; a date YYYY-MM-DD is required`);
  return asField(field, () => normaliseDate(value));
}

export function optionalDate(field: string, value: unknown): string | null {
  return isAbsent(value) ? null : dateOf(field, value);
}

/**
 * Next action date: its format is only half shown (yyyy-MM-dd in the status lookup), so the raw value
 * is always kept and the date is filled only when the raw value is such a date.
 */
export function nextActionDate(field: string, value: unknown): { date: string | null; raw: string | null } {
  const raw = optionalText(field, value);
  if (raw === null) return { date: null, raw: null };
  try {
    return { date: normaliseDate(raw), raw };
  } catch {
    return { date: null, raw };
  }
}

/** A domain check of one field (money, time): its error becomes the field's FieldProblem. */
function asField<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw new FieldProblem(`${field}: ${(error as Error).message}`);
  }
}

/** An optional field that is not there: absent, null or empty. */
function isAbsent(value: unknown): value is undefined | null | '' {
  return value === undefined || value === null || value === '';
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${String(value)} (a ${typeof value})`;
  return `of type ${Array.isArray(value) ? 'array' : typeof value}`;
}
