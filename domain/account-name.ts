/**
 * A provider account's name (docs/connecting-a-provider.md, "Several accounts"): 1 to 32 of a-z, 0-9
 * and -, as the accounts configuration, the warehouse's check constraint and the analysts' row
 * security allow it. Parsed once where a name enters (a command's option, a workflow's input, an HTTP
 * parameter, a file's column, the accounts file); everything inside takes an {@link AccountName}.
 */
import { typedError } from './errors.ts';

/** A checked account name: only {@link parseAccountName} and {@link DEFAULT_ACCOUNT} make one. */
export type AccountName = string & { readonly __brand: 'AccountName' };

/** The one written form of an account name in non-migration code (JSON schemas use its `source`). */
export const ACCOUNT_NAME_PATTERN = /^[a-z0-9-]{1,32}$/;
const PATTERN = ACCOUNT_NAME_PATTERN;

/** The account of data that names none, and of a deployment with no accounts file. */
export const DEFAULT_ACCOUNT = 'default' as AccountName;

/** A name that is not an account name. Not retryable: the caller must give another. */
export class InvalidAccountName extends typedError('final') {
  constructor(value: unknown) {
    super(accountNameProblem(value) ?? `account ${JSON.stringify(value)} is not an account name`);
  }
}

export function isAccountName(value: unknown): value is AccountName {
  return typeof value === 'string' && PATTERN.test(value);
}

/** What is wrong with `value` as an account name, or null when it is one (for lists of problems). */
export function accountNameProblem(value: unknown): string | null {
  if (isAccountName(value)) return null;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value);
  return `account ${shown} is not an account name: use 1 to 32 of a-z, 0-9 and -`;
}

/** The name, checked. @throws InvalidAccountName */
export function parseAccountName(value: unknown): AccountName {
  if (!isAccountName(value)) throw new InvalidAccountName(value);
  return value;
}

/** The name when given, else {@link DEFAULT_ACCOUNT}. @throws InvalidAccountName */
export function accountOrDefault(value: string | undefined): AccountName {
  return value === undefined ? DEFAULT_ACCOUNT : parseAccountName(value);
}
