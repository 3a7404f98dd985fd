import { impliedToCents } from '../../../domain/money.ts';
import { normaliseDate } from '../../../domain/time/eastern.ts';
import { splitCsvLine } from '../read-lines.ts';
import type { FieldSpec } from './layout.ts';

/** Checks and conversions of single legacy fields; a failure is a FieldProblem, which rejects the row. */

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

export function currency(n: number, spec: FieldSpec, value: string): string {
  if (!CURRENCY.test(value)) {
    throw new FieldProblem(`field ${n} (${spec.label}) '${value}' is not three uppercase letters (ISO 4217)`);
  }
  return value;
}
