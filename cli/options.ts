/**
 * The option parsers of every command, so that a value is checked once, the same way, while the
 * command line is parsed (before any work): dates, instants, whole numbers, fractions and output
 * files. Each throws commander's InvalidArgumentError with what is allowed; cli/program.ts turns it
 * into the one-line usage error (exit 2). Then the options that several commands share, declared
 * once each: a date range and the note and author of a recorded action (functions that add them to a
 * command, as cli/analysts.ts withLimits does for its own pair), and the account, one or a repeatable
 * list (an Option to add).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { isAccountName, type AccountName } from '../domain/account-name.ts';
import { isoDate } from '../domain/time/calendar.ts';
import { normaliseInstant } from '../domain/time/iso-instant.ts';

/** A date written YYYY-MM-DD that exists (2026-02-30 and 2026/04/01 are refused). */
export function dateArg(value: string): string {
  try {
    return isoDate(value);
  } catch {
    throw new InvalidArgumentError('give a date that exists, written YYYY-MM-DD');
  }
}

/** A provider account's name (domain/account-name.ts): parsed here, where it enters. */
export function accountArg(value: string): AccountName {
  if (!isAccountName(value))
    throw new InvalidArgumentError('give an account name: 1 to 32 of a-z, 0-9 and - (recon accounts list)');
  return value;
}

/** A three-letter currency code, upper-cased (cad is CAD). */
export function currencyArg(value: string): string {
  if (!/^[A-Za-z]{3}$/.test(value))
    throw new InvalidArgumentError('give a three-letter currency code, e.g. CAD');
  return value.toUpperCase();
}

/** A text that is not blank (a note, who acts), trimmed. */
export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('give a non-empty text');
  return value.trim();
}

/** An ISO-8601 instant with its offset, e.g. 2026-04-02T12:00:00Z. */
export function instantArg(value: string): string {
  try {
    normaliseInstant(value, { requireZone: true });
  } catch {
    throw new InvalidArgumentError('give an ISO-8601 instant, e.g. 2026-04-02T12:00:00Z');
  }
  return value;
}

/** A whole number from `min` to `max` (digits only: -1, 1.5 and 1e3 are refused). */
export function wholeNumberArg(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `give a whole number of at least ${min}`
          : `give a whole number from ${min} to ${max}`,
      );
    }
    return n;
  };
}

/** A number from 0 to 1 (a rate). */
export function fractionArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new InvalidArgumentError('give a number from 0 to 1');
  }
  return n;
}

/** A non-negative number (milliseconds, bytes). */
export function nonNegativeArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new InvalidArgumentError('give a number of at least 0');
  }
  return n;
}

/**
 * A file the command will write: its folder exists and is writable, and the path is not a folder.
 * Checked while parsing, so that a report is not computed for nothing.
 */
export function outputFileArg(value: string): string {
  const path = resolve(value);
  const folder = dirname(path);
  let existing: ReturnType<typeof statSync> | undefined;
  try {
    existing = statSync(path, { throwIfNoEntry: false });
  } catch {
    existing = undefined;
  }
  if (existing?.isDirectory()) throw new InvalidArgumentError('it is a folder: give a file path');
  const folderStat = statSync(folder, { throwIfNoEntry: false });
  if (!folderStat?.isDirectory()) {
    throw new InvalidArgumentError(`the folder ${folder} does not exist: create it or give another path`);
  }
  try {
    accessSync(existing ? path : folder, constants.W_OK);
  } catch {
    throw new InvalidArgumentError(
      `${existing ? 'the file' : `the folder ${folder}`} is not writable: give a path you can write`,
    );
  }
  return value;
}

export const MAX_REJECTED_HELP =
  'fail the load (exit 3, nothing of it kept) when more rows than this are rejected; default: no limit';

/**
 * What a --from..--to range counts, and so its help: Eastern business dates (what a reconcile run
 * matched: reconcile, report, the worklist) or Eastern days (what is loaded: pull, backfill).
 */
const DATE_RANGE_HELP = {
  'business dates': ['first Eastern business date', 'last Eastern business date'],
  days: ['first Eastern day', 'last Eastern day, inclusive'],
} as const;

/** The --from and --to of a command that takes a required range, as the action receives them. */
export interface DateRangeOptions {
  from: string;
  to: string;
}

/**
 * Adds --from and --to (YYYY-MM-DD, {@link dateArg}) to `command`, required unless `optional`; a
 * reversed range is refused for every command by cli/program.ts.
 *
 * @example
 *   withDateRange(program.command('report').description('…'), 'business dates').option('--json', '…');
 */
export function withDateRange(
  command: Command,
  counts: keyof typeof DATE_RANGE_HELP,
  { optional = false } = {},
): Command {
  const [first, last] = DATE_RANGE_HELP[counts];
  return command
    .addOption(new Option('--from <YYYY-MM-DD>', first).argParser(dateArg).makeOptionMandatory(!optional))
    .addOption(new Option('--to <YYYY-MM-DD>', last).argParser(dateArg).makeOptionMandatory(!optional));
}

/**
 * Adds the required --note <text> (why) and --by <name> (who) of an action that is recorded with its
 * author: neither may be blank ({@link nonEmpty}). `help` says what each means for this action.
 *
 * @example
 *   withNoteAndAuthor(discrepancies.command('ack'), { note: 'why', by: 'who acknowledges' });
 */
export function withNoteAndAuthor(command: Command, help: { note: string; by: string }): Command {
  return command
    .requiredOption('--note <text>', `${help.note} (not empty)`, nonEmpty)
    .requiredOption('--by <name>', `${help.by} (not empty)`, nonEmpty);
}

/**
 * The --account <name> option, parsed where it enters ({@link accountArg}); `help` says what the
 * command does with the account. `.makeOptionMandatory()` where the command needs one.
 *
 * @example
 *   command.addOption(accountOption('report on this provider account only (default: every account)'));
 */
export function accountOption(help: string): Option {
  return new Option('--account <name>', help).argParser(accountArg);
}

/** Each name of a repeated --account, parsed by {@link accountArg}, collected in the order given. */
export function accountsArg(value: string, previous: readonly AccountName[] = []): AccountName[] {
  return [...previous, accountArg(value)];
}

/** A comma-separated list of account names (`ca-main,us-main`), each trimmed and parsed by {@link accountArg}. */
export function accountListArg(value: string): AccountName[] {
  return value.split(',').map((name) => accountArg(name.trim()));
}

/**
 * The repeatable --account <name> (a list of accounts, {@link accountsArg}): the same parser and
 * error as {@link accountOption}; without it the action receives no list. `help` says what the list
 * limits.
 *
 * @example
 *   command.addOption(accountsOption('limit the token to this provider account (repeat for more)'));
 */
export function accountsOption(help: string): Option {
  return new Option('--account <name>', help).argParser(accountsArg);
}
