import { databaseErrorLine } from '../db/connection-errors.ts';
import { type Config, loadConfig, loadDotEnv } from '../lib/config.ts';
import { ReconError } from '../lib/errors.ts';

/**
 * Runs a command body with the configuration from the environment (and .env). Errors become one line
 * on stderr and a non-zero exit code: 2 for bad configuration or input, 1 for anything else. Messages
 * are built without secrets, so they are printed as they are.
 */
export async function runCommand(body: (config: Config) => Promise<number | void>): Promise<void> {
  try {
    loadDotEnv();
    process.exitCode = (await body(loadConfig())) ?? 0;
  } catch (error) {
    // A database unreachable, lost or silent: one line naming the server, exit 1 (re-run is the remedy).
    const database = databaseErrorLine(error);
    process.stderr.write(`recon: ${database ?? describeError(error)}\n`);
    process.exitCode = database === undefined && error instanceof ReconError && !error.retryable ? 2 : 1;
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause =
      error.cause instanceof Error && !error.message.includes(error.cause.message)
        ? ` (${error.cause.message})`
        : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
