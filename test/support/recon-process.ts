/**
 * `node bin/recon.mjs ...` as a user runs it: spawned, so that a test can crash or stall the server
 * while the command runs, and read its exit code, stdout and stderr. Every test and benchmark that
 * runs the command starts it here.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RECON_BIN = fileURLToPath(new URL('../../bin/recon.mjs', import.meta.url));

export interface ReconRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** From spawn to exit, in ms. */
  readonly ms: number;
}

export interface ReconProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr interleaved as they came. */
  output(): string;
  /** Neither exited nor killed yet. */
  alive(): boolean;
  /** Exit code (128 when killed by a signal) and the outputs. */
  done: Promise<ReconRun>;
}

export interface ReconSpawnOptions {
  /** Default: the repository root. Any .env in it is read by the command. */
  readonly cwd?: string;
  /** A copy of the command's stderr goes to this process's (benchmarks with RECON_PROFILE). */
  readonly echoStderr?: boolean;
  /** SIGTERM after this long. */
  readonly timeoutMs?: number;
  /** In a process group of its own, so that a kill of the group reaches all it started. */
  readonly detached?: boolean;
  /** Node's own arguments, before the script's (a hook: packages-hook.ts). */
  readonly nodeArgs?: readonly string[];
}

/**
 * Starts `node bin/recon.mjs ARGS` with only PATH, DATABASE_URL (unless undefined), RECON_ENVIRONMENT
 * staging and a RECON_DATA_DIR that does not exist, then `env` on top (a variable set to undefined is
 * left out).
 */
export function spawnRecon(
  databaseUrl: string | undefined,
  args: string[],
  env: Record<string, string | undefined> = {},
  options: ReconSpawnOptions = {},
): ReconProcess {
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), RECON_BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH,
      ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
      RECON_ENVIRONMENT: 'staging',
      RECON_DATA_DIR: '/nonexistent-recon-data-dir',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let out = '';
  let err = '';
  let both = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    both += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
    both += c.toString();
  });
  if (options.echoStderr) child.stderr?.pipe(process.stderr);
  const timer =
    options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill(), options.timeoutMs);
  const done = new Promise<ReconRun>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: out,
        stderr: err,
        ms: Math.round(performance.now() - started),
      });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    output: () => both,
    alive: () => child.exitCode === null && child.signalCode === null,
    done,
  };
}

/** Runs `recon ARGS` to its end; see {@link spawnRecon} for the environment. */
export function recon(
  databaseUrl: string | undefined,
  args: string[],
  env: Record<string, string | undefined> = {},
  options: ReconSpawnOptions = {},
): Promise<ReconRun> {
  return spawnRecon(databaseUrl, args, env, options).done;
}

/** `recon demo ARGS` to its end, on an embedded warehouse in a data directory of its own (removed after). */
export async function reconDemo(args: string[], timeoutMs: number): Promise<ReconRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'recon-demo-'));
  // The embedded PostgreSQL runs as its own user when the tests run as root: it must reach the directory.
  chmodSync(dataDir, 0o755);
  try {
    return await recon(undefined, ['demo', ...args], { RECON_DATA_DIR: dataDir }, { timeoutMs });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One query on a connection of its own (which the test may leave open by not calling this). */
export async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query<R>(text, values);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Waits until `check` returns a truthy value (polled every 100 ms), or throws after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every table and view that recon_analyst may read, each as a row count and an md5 of its rows in a
 * stable order (columns the analyst may not read, and `now()`-relative ages, left out).
 */
export async function analystSnapshot(url: string): Promise<Record<string, string>> {
  const relations = await query<{ name: string; columns: string[] }>(
    url,
    `select c.relname as name,
       array_agg(a.attname::text order by a.attnum) as columns
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
     where n.nspname = 'public' and c.relkind in ('r', 'v', 'm')
       and has_column_privilege('recon_analyst', c.oid, a.attnum, 'select')
       and a.attname not in ('age', 'age_days', 'age_hours', 'open_days', 'open_for')
     group by c.relname order by c.relname`,
  );
  const out: Record<string, string> = {};
  for (const { name, columns } of relations.rows) {
    const cols = columns.map((c) => `"${c}"`).join(', ');
    const r = await query<{ n: number; h: string | null }>(
      url,
      `select count(*)::int as n, md5(string_agg(x::text, E'\\n' order by x::text)) as h
       from (select ${cols} from "${name}") x`,
    );
    out[name] = `${r.rows[0]!.n} ${r.rows[0]!.h ?? ''}`;
  }
  return out;
}
