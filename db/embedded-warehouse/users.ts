import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, type WarehousePaths } from './data-dir.ts';

/**
 * What lets commands share one embedded server across processes (docs/operations.md, "Two commands
 * at once on the embedded warehouse"):
 * - the start lock (`warehouse.lock`, the holder's pid): held while a command finds or starts the
 *   server and registers as its user, and while a command decides to stop it and stops it. So a
 *   command never meets a server that another is starting or stopping half-way (PostgreSQL's 57P03,
 *   "the database system is starting up / shutting down").
 * - the users (`warehouse-users/<pid>`): every process holding a lease. A command stops the server
 *   only when no other live process is registered; a killed command's file is ignored and removed.
 */

export const START_LOCK_WAIT_MS = 120_000;

function lockFile(paths: WarehousePaths): string {
  return join(paths.root, 'warehouse.lock');
}

function usersDir(paths: WarehousePaths): string {
  return join(paths.root, 'warehouse-users');
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** This process's turns, one at a time per data directory (the file lock is per process). */
const turns = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` holding the data directory's start lock, waiting (up to START_LOCK_WAIT_MS, saying so
 * once on `log`) for another command that holds it; a lock whose holder died is taken over.
 */
export async function withStartLock<T>(
  paths: WarehousePaths,
  fn: () => Promise<T>,
  log: (line: string) => void = () => {},
): Promise<T> {
  const before = turns.get(paths.root) ?? Promise.resolve();
  const turn = before.catch(() => {}).then(() => holdingLock(paths, fn, log));
  turns.set(paths.root, turn);
  try {
    return await turn;
  } finally {
    if (turns.get(paths.root) === turn) turns.delete(paths.root);
  }
}

async function holdingLock<T>(
  paths: WarehousePaths,
  fn: () => Promise<T>,
  log: (line: string) => void,
): Promise<T> {
  mkdirSync(paths.root, { recursive: true });
  const file = lockFile(paths);
  const deadline = Date.now() + START_LOCK_WAIT_MS;
  let said = false;
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(file);
    if (holder !== undefined && !isAlive(holder)) {
      // Re-read just before removing: another waiter may have taken it over meanwhile.
      if (holderOf(file) === holder) rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `another recon command (pid ${holder ?? 'unknown'}) has been starting or stopping the embedded PostgreSQL in ${paths.root} for ${START_LOCK_WAIT_MS / 1000} s: wait for it, or stop it and delete ${file}`,
      );
    }
    if (!said) {
      said = true;
      log(
        `recon: waiting for another command (pid ${holder ?? 'unknown'}) to start or stop the embedded warehouse`,
      );
    }
    await sleep(50);
  }
  try {
    return await fn();
  } finally {
    if (holderOf(file) === process.pid) rmSync(file, { force: true });
  }
}

/** Registers this process as a user of the server (call holding the start lock). */
export function registerUser(paths: WarehousePaths): void {
  mkdirSync(usersDir(paths), { recursive: true });
  writeFileSync(join(usersDir(paths), String(process.pid)), `${new Date().toISOString()}\n`, { mode: 0o600 });
}

export function unregisterUser(paths: WarehousePaths): void {
  rmSync(join(usersDir(paths), String(process.pid)), { force: true });
}

/** Live processes other than this one registered as users; files of dead ones are removed. */
export function otherUsers(paths: WarehousePaths): number[] {
  let names: string[];
  try {
    names = readdirSync(usersDir(paths));
  } catch {
    return [];
  }
  const live: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    if (isAlive(pid)) live.push(pid);
    else rmSync(join(usersDir(paths), name), { force: true });
  }
  return live;
}
