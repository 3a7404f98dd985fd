/**
 * Typed errors shared by every area. Each carries data, says what happened and what to do, and tells
 * whether retrying can help. They are mapped to Temporal failures once, at the activity boundary
 * (activities/failure-mapping.ts). Messages never contain secrets,
 * nor consumers' personal data (input quoted in a message goes through redactPersonal).
 */

import { redactPersonal } from './privacy.ts';

export abstract class ReconError extends Error {
  /** Whether the same call may succeed later (network, 5xx, 429, timeouts). */
  abstract readonly retryable: boolean;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The arguments after the message: the error's fields (none: may be left out), then the cause. */
type FieldArgs<F> = keyof F extends never
  ? [fields?: F, options?: ErrorOptions]
  : [fields: F, options?: ErrorOptions];

/**
 * The one way to declare a typed error: whether retrying can help, and the fields it carries, typed
 * once and set from one object (erasable TypeScript has no parameter properties), as Effect's
 * `Data.TaggedError` does. The class body holds only what is its own: a constructor that words the
 * message, where every caller's message has one form. A subclass of a typed error that adds fields
 * (NotAReport) declares them itself.
 *
 * ### Examples
 * ```ts
 * export class UsageError extends typedError('final') {}
 * export class RateLimited extends typedError<{ readonly retryAfterMs: number }>('retryable') {}
 * throw new RateLimited('report endpoint answered 429', { retryAfterMs: 2500 });
 * ```
 */
export function typedError<F extends object = Record<never, never>>(retry: 'retryable' | 'final') {
  class TypedError extends ReconError {
    readonly retryable: boolean = retry === 'retryable';
    constructor(message: string, fields?: F, options?: ErrorOptions) {
      super(message, options);
      Object.assign(this, fields);
    }
  }
  // The fields are set by Object.assign, which TypeScript cannot follow: the cast says what it did.
  return TypedError as unknown as new (message: string, ...args: FieldArgs<F>) => TypedError & Readonly<F>;
}

/** A missing or malformed setting. Not retryable: the operator must fix the environment. */
export class ConfigError extends typedError('final') {}

/** A file or payload that cannot be read at all (truncated ZIP, JSON broken half-way, unknown format). */
export class UnreadableInput extends typedError<{
  readonly file: string;
  readonly line: number | null;
  /** What is wrong, without the file and line (personal data redacted). */
  readonly reason: string;
}>('final') {
  constructor(file: string, line: number | null, reason: string, options?: ErrorOptions) {
    const redacted = redactPersonal(reason);
    super(
      `${file}${line === null ? '' : `:${line}`}: ${redacted}`,
      { file, line, reason: redacted },
      options,
    );
  }
}

/**
 * A non-empty input of which no line is a record: an error text, a login page, every line of another
 * layout. It is not a report with bad rows but no report at all, so nothing of it is loaded (the
 * command line exits 2, as for any unreadable input; a pull names its source and window). `start` is
 * the input's first characters, on one line, secrets and personal data redacted.
 */
export class NotAReport extends UnreadableInput {
  readonly lines: number;
  /** The first line's number and why it is not a record. */
  readonly first: { readonly line: number; readonly reason: string };
  readonly start: string;
  constructor(file: string, lines: number, first: { line: number; reason: string }, start: string) {
    super(
      file,
      null,
      `not a report: ${lines} line${lines === 1 ? '' : 's'}, none of them a record (line ${first.line}: ${first.reason}); it starts: ${JSON.stringify(start)}`,
    );
    this.lines = lines;
    this.first = { line: first.line, reason: redactPersonal(first.reason) };
    this.start = start;
  }
}

/** One record that fails to parse or validate; it goes to rejected_rows, the rest of the file loads. */
export class InvalidRecord extends typedError<{ readonly line: number; readonly reason: string }>('final') {
  constructor(line: number, reason: string) {
    const redacted = redactPersonal(reason);
    super(`line ${line}: ${redacted}`, { line, reason: redacted });
  }
}

/** The warehouse holds data of another environment (staging vs production); mixing them is refused. */
export class EnvironmentMismatch extends typedError('final') {}

/**
 * A command given a bad or missing option, a malformed or impossible date, a reversed range or an
 * output file it cannot write: the command line exits 2 with this one line and a pointer to --help.
 */
export class UsageError extends typedError('final') {}

/**
 * A load that rejected more rows than its caller allows (`--max-rejected`): it was rolled back whole
 * and nothing of it is kept. The command line exits 3.
 */
export class TooManyRejected extends typedError<{ readonly limit: number; readonly rejected: number }>(
  'final',
) {
  /** `setting`: the option or variable that set the limit, named in the message. */
  constructor(what: string, rejected: number, limit: number, setting = '--max-rejected') {
    super(
      `${what}: more than ${limit} row(s) rejected (${setting} ${limit}); the load was rolled back and nothing of it is kept: fix the input, or raise ${setting}`,
      { limit, rejected },
    );
  }
}
