import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The files of a warehouse data directory: paths, postmaster.pid, the session file, the 0600 passwords. */

export const SUPERUSER = 'postgres';
/** The login role that `recon warehouse url` and `psql` give analysts: a member of recon_analyst. */
export const ANALYST_LOGIN = 'analyst';

export interface WarehousePaths {
  readonly root: string;
  readonly pgDir: string;
  readonly log: string;
  readonly passwordFile: string;
  readonly analystPasswordFile: string;
  readonly sessionFile: string;
}

export function warehousePaths(dataDir: string): WarehousePaths {
  const root = resolve(dataDir);
  return {
    root,
    pgDir: join(root, 'postgres'),
    log: join(root, 'postgres.log'),
    passwordFile: join(root, 'postgres.password'),
    analystPasswordFile: join(root, 'analyst.password'),
    sessionFile: join(root, 'warehouse-session.json'),
  };
}

export interface LockFile {
  readonly pid: number;
  readonly port: number;
  readonly status: string;
}

/** The lines of postmaster.pid: 1 pid, 4 port, 8 status (starting, ready, stopping). */
export function readLockFile(pgDir: string): LockFile | undefined {
  try {
    const lines = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    return { pid, port, status: (lines[7] ?? '').trim() };
  } catch {
    return undefined;
  }
}

/** Whether the process runs: a zombie (exited, not yet reaped by its parent) does not. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // /proc/PID/stat: "pid (comm) state ...", state Z for a zombie (Linux; elsewhere kill() decides).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

export function writeSecretFile(file: string, value: string): void {
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
}

export function readSecretFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The superuser's password: generated for a new data directory, `postgres` for one made before. */
export function superuserPassword(paths: WarehousePaths, create: boolean): string {
  const stored = readSecretFile(paths.passwordFile);
  if (stored) return stored;
  if (existsSync(join(paths.pgDir, 'PG_VERSION')) || !create) return 'postgres';
  mkdirSync(paths.root, { recursive: true });
  const generated = randomBytes(18).toString('base64url');
  writeSecretFile(paths.passwordFile, generated);
  return generated;
}

export function superuserUrl(paths: WarehousePaths, port: number): string {
  const password = encodeURIComponent(superuserPassword(paths, false));
  return `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres`;
}

/** The analyst login's password, generated once and kept in the data directory (0600). */
export function analystPassword(paths: WarehousePaths): string {
  const stored = readSecretFile(paths.analystPasswordFile);
  if (stored) return stored;
  const generated = randomBytes(18).toString('base64url');
  writeSecretFile(paths.analystPasswordFile, generated);
  return generated;
}

export function analystUrl(paths: WarehousePaths, port: number): string {
  return `postgres://${ANALYST_LOGIN}:${encodeURIComponent(analystPassword(paths))}@127.0.0.1:${port}/postgres`;
}

export function isSessionPid(paths: WarehousePaths, pid: number): boolean {
  try {
    return (JSON.parse(readFileSync(paths.sessionFile, 'utf8')) as { pid?: number }).pid === pid;
  } catch {
    return false;
  }
}

export function logTail(paths: WarehousePaths): string {
  try {
    const lines = readFileSync(paths.log, 'utf8').trim().split('\n');
    return lines.slice(-3).join(' | ');
  } catch {
    return '';
  }
}
