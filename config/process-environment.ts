import { delimiter, join } from 'node:path';
import { ConfigError } from '../domain/errors.ts';

/**
 * What ibt-recon takes from the process environment beside its own settings (config/config.ts): the
 * programs it runs (PATH, TEMPORAL_CLI_PATH, TEMPORAL_TEST_SERVER_PATH), the environment those
 * programs inherit, and Node's switch that would turn certificate verification off. Read here so
 * that config/ stays the one place that reads the environment (docs/architecture.md).
 */

/** The directories of PATH, in order: where a command looks for a program it runs. */
export function searchPath(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  return (env.PATH ?? '').split(delimiter).filter(Boolean);
}

/** The first `name` in PATH's directories that `usable` accepts, else undefined. */
export function findOnPath(
  name: string,
  usable: (path: string) => boolean,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  for (const dir of searchPath(env)) {
    if (usable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The environment a child process (postgres, psql) starts with: this process's, `extra` over it. */
export function childEnvironment(
  extra: NodeJS.ProcessEnv = {},
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return { ...env, ...extra };
}

/** The Temporal binaries a person named (docs/reference.md, "Environment variables"); unset: searched. */
export interface TemporalBinaryPaths {
  /** TEMPORAL_CLI_PATH: the Temporal CLI that runs the dev server. */
  readonly cli: string | undefined;
  /** TEMPORAL_TEST_SERVER_PATH: the time-skipping test server of the workflows' tests. */
  readonly testServer: string | undefined;
}

export function temporalBinaryPaths(env: NodeJS.ProcessEnv = process.env): TemporalBinaryPaths {
  return {
    cli: env.TEMPORAL_CLI_PATH?.trim() || undefined,
    testServer: env.TEMPORAL_TEST_SERVER_PATH?.trim() || undefined,
  };
}

/**
 * Refuses NODE_TLS_REJECT_UNAUTHORIZED=0, which turns off certificate verification for every HTTPS
 * call of the process: the provider client never runs without it.
 */
export function checkTlsVerification(env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new ConfigError(
      'NODE_TLS_REJECT_UNAUTHORIZED=0 disables certificate verification: unset it (the provider client refuses to run without verification)',
    );
  }
}
