import type { DatabaseHandle, openDatabase } from '../db/connect.ts';
import { databaseErrorLine } from '../db/connection-errors.ts';
import { type Config, loadConfig, loadDotEnv } from '../config/config.ts';
import { ReconError, TooManyRejected, UsageError } from '../domain/errors.ts';

/** Exit codes of docs/reference.md ("Exit codes and errors"). */
export const EXIT = { failed: 1, usage: 2, refusedByLimit: 3 } as const;

let commandPath = 'recon';

/** The command being run (`recon report`), for the `see ... --help` hint of a usage error. */
export function setCommandPath(path: string): void {
  commandPath = path;
}

/** A usage error: one line naming the option and what is allowed, then where to read more. Exit 2. */
export function writeUsageError(path: string, message: string): void {
  process.stderr.write(`recon: ${message}\nsee ${path} --help\n`);
  process.exitCode = EXIT.usage;
}

/**
 * Runs a command body with the configuration from the environment (and .env). Errors become one line
 * on stderr and a non-zero exit code: 2 for a usage error (with the --help hint), bad configuration or
 * unreadable input, 3 for a load refused by its own limits (--max-rejected), 1 for anything else.
 * Messages are built without secrets, so they are printed as they are.
 */
export async function runCommand(body: (config: Config) => Promise<number | void>): Promise<void> {
  try {
    loadDotEnv();
    process.exitCode = (await body(loadConfig())) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      writeUsageError(commandPath, describeError(error));
      return;
    }
    // A database unreachable, lost or silent: one line naming the server, exit 1 (re-run is the remedy).
    const database = databaseErrorLine(error);
    process.stderr.write(`recon: ${database ?? describeError(error)}\n`);
    process.exitCode =
      database !== undefined
        ? EXIT.failed
        : error instanceof TooManyRejected
          ? EXIT.refusedByLimit
          : error instanceof ReconError && !error.retryable
            ? EXIT.usage
            : EXIT.failed;
  }
}

type OpenOptions = Parameters<typeof openDatabase>[1];

/**
 * Runs `body` with the warehouse open (`options` as for openDatabase) and closes it however the body
 * ends. db/connect.ts is loaded only here, when a command that needs the warehouse runs.
 */
export async function withDatabase<T>(
  config: Config,
  body: (handle: DatabaseHandle) => Promise<T>,
  options?: OpenOptions,
): Promise<T> {
  const { openDatabase } = await import('../db/connect.ts');
  const handle = await openDatabase(config, options);
  try {
    return await body(handle);
  } finally {
    await handle.close();
  }
}

/** Runs a command body as {@link runCommand} does, with the warehouse open ({@link withDatabase}). */
export function runWithDatabase(
  body: (handle: DatabaseHandle, config: Config) => Promise<number | void>,
  options?: OpenOptions,
): Promise<void> {
  return runCommand((config) => withDatabase(config, (handle) => body(handle, config), options));
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause =
      error.cause instanceof Error && !error.message.includes(error.cause.message)
        ? ` (${error.cause.message})`
        : '';
    return `${error.message}${cause}`.replace(/\s*\n\s*/g, ' ');
  }
  return String(error);
}
