/**
 * The worklist's filter form as a person fills it in: amounts in dollars and cents (`10`, `10.00`,
 * `1,250.5`), a currency in any case, dates from the date pickers. Each field is checked on its own,
 * so that a wrong value comes back beside its field instead of as one error for the whole request;
 * what passes is handed to the discrepancies' filter parser (reconcile/discrepancies/filter.ts), which the JSON API
 * uses too.
 */
import { isAccountName } from '../../domain/account-name.ts';
import { isValidDate } from '../../domain/time/calendar.ts';
import { DISCREPANCY_KINDS } from '../../reconcile/settings.ts';
import {
  InvalidFilter,
  parseFilter,
  STATUS_FILTERS,
  type DiscrepancyFilter,
  type StatusFilter,
} from '../../reconcile/discrepancies/filter.ts';

/** The form's fields, in the order they are shown. */
export const FORM_FIELDS = [
  'status',
  'kind',
  'account',
  'currency',
  'from',
  'to',
  'assignee',
  'min',
  'q',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

export interface FilterForm {
  /** The filter, when every field was accepted. */
  readonly filter?: DiscrepancyFilter & { status: StatusFilter };
  /** What the person typed, to show again. */
  readonly values: Partial<Record<FormField, string>>;
  /** A message per refused field; `form` for one that concerns the whole filter. */
  readonly errors: Partial<Record<FormField | 'form', string>>;
}

const AMOUNT = /^\$?\s*(\d{1,3}(?:,\d{3})+|\d{1,13})(?:\.(\d{1,2}))?$/;

/** `10` → 1000, `10.5` → 1050, `1,250.00` → 125000; undefined when it is not an amount. */
export function amountToCents(text: string): number | undefined {
  const m = AMOUNT.exec(text.trim());
  if (!m) return undefined;
  const units = Number(m[1]!.replaceAll(',', ''));
  const cents = Number((m[2] ?? '').padEnd(2, '0'));
  const total = units * 100 + cents;
  return Number.isSafeInteger(total) ? total : undefined;
}

/** Cents as the form shows them: 1050 → `10.50` (no separators: what the form accepts back). */
export function centsToAmount(cents: number): string {
  return `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function first(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v === null) return undefined;
  const text = String(v).trim();
  return text === '' ? undefined : text;
}

function checkField(name: FormField, value: string): string | undefined {
  switch (name) {
    case 'status':
      return (STATUS_FILTERS as readonly string[]).includes(value)
        ? undefined
        : `Choose one of: ${STATUS_FILTERS.join(', ')}.`;
    case 'kind':
      return value.split(',').every((k) => (DISCREPANCY_KINDS as readonly string[]).includes(k.trim()))
        ? undefined
        : `“${value.slice(0, 40)}” is not a discrepancy kind: choose one from the list.`;
    case 'account':
      return isAccountName(value)
        ? undefined
        : 'An account name is 1 to 32 of a-z, 0-9 and - (for example ca-main).';
    case 'currency':
      return /^[A-Z]{3}$/.test(value) ? undefined : 'Use a 3-letter currency code, such as CAD or USD.';
    case 'from':
    case 'to':
      return isValidDate(value)
        ? undefined
        : `${value.slice(0, 40)} is not a date: use YYYY-MM-DD, for example 2026-03-02.`;
    case 'min':
      return amountToCents(value) === undefined
        ? 'Use an amount in dollars and cents, such as 10 or 10.00.'
        : undefined;
    default:
      return undefined;
  }
}

/**
 * Reads the filter form from query parameters. `min_cents` (what links and the API carry) is read
 * as the amount it stands for.
 */
export function readFilterForm(query: Record<string, unknown>): FilterForm {
  const values: Partial<Record<FormField, string>> = {};
  for (const name of FORM_FIELDS) {
    const v = first(query[name]);
    if (v !== undefined) values[name] = v;
  }
  const minCents = first(query.min_cents);
  if (values.min === undefined && minCents !== undefined)
    values.min = /^\d{1,15}$/.test(minCents) ? centsToAmount(Number(minCents)) : minCents;
  if (values.currency !== undefined) values.currency = values.currency.toUpperCase();
  if (values.account !== undefined) values.account = values.account.toLowerCase();

  const errors: Partial<Record<FormField | 'form', string>> = {};
  for (const name of FORM_FIELDS) {
    const v = values[name];
    const error = v === undefined ? undefined : checkField(name, v);
    if (error) errors[name] = error;
  }
  if (!errors.from && !errors.to && values.from && values.to && values.from > values.to)
    errors.to = `The last date comes before the first (${values.from}).`;
  if (Object.keys(errors).length > 0) return { values, errors };

  const { min, ...rest } = values;
  try {
    const filter = parseFilter({ ...rest, ...(min ? { min_cents: String(amountToCents(min)) } : {}) });
    return { filter, values, errors };
  } catch (error) {
    if (error instanceof InvalidFilter) return { values, errors: { form: error.message } };
    throw error;
  }
}
