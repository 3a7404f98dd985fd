import { redactPersonal } from './privacy.ts';

/**
 * Typed errors shared by every area. Each carries data, says what happened and what to do, and tells
 * whether retrying can help. They are mapped to Temporal failures once, at the activity boundary
 * (activities/failure-mapping.ts). Messages never contain secrets,
 * nor consumers' personal data (input quoted in a message goes through redactPersonal).
 */
export abstract class ReconError extends Error {
  /** Whether the same call may succeed later (network, 5xx, 429, timeouts). */
  abstract readonly retryable: boolean;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A missing or malformed setting. Not retryable: the operator must fix the environment. */
export class ConfigError extends ReconError {
  readonly retryable = false;
}

/** A file or payload that cannot be read at all (truncated ZIP, JSON broken half-way, unknown format). */
export class UnreadableInput extends ReconError {
  readonly retryable = false;
  readonly file: string;
  readonly line: number | null;
  constructor(file: string, line: number | null, reason: string, options?: ErrorOptions) {
    super(`${file}${line === null ? '' : `:${line}`}: ${redactPersonal(reason)}`, options);
    this.file = file;
    this.line = line;
  }
}

/** One record that fails to parse or validate; it goes to rejected_rows, the rest of the file loads. */
export class InvalidRecord extends ReconError {
  readonly retryable = false;
  readonly line: number;
  readonly reason: string;
  constructor(line: number, reason: string) {
    super(`line ${line}: ${redactPersonal(reason)}`);
    this.line = line;
    this.reason = redactPersonal(reason);
  }
}

/** The warehouse holds data of another environment (staging vs production); mixing them is refused. */
export class EnvironmentMismatch extends ReconError {
  readonly retryable = false;
}
