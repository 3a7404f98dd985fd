/**
 * `node bin/recon.ts ...` as a user runs it, against a fault test's own PostgreSQL: spawned, so that a
 * test can crash or stall the server while the command runs, and read its exit code, stdout and stderr.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ReconProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Exit code and the time it took, in ms, from spawn. */
  done: Promise<{ code: number; stdout: string; stderr: string; ms: number }>;
}

export function spawnRecon(
  databaseUrl: string,
  args: string[],
  env: Record<string, string> = {},
): ReconProcess {
  const started = performance.now();
  const child = spawn(process.execPath, ['bin/recon.ts', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      RECON_ENVIRONMENT: 'staging',
      RECON_DATA_DIR: '/nonexistent-recon-data-dir',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<{ code: number; stdout: string; stderr: string; ms: number }>((resolve) => {
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: out,
        stderr: err,
        ms: Math.round(performance.now() - started),
      }),
    );
  });
  return { child, stdout: () => out, stderr: () => err, done };
}

export function recon(databaseUrl: string, args: string[], env: Record<string, string> = {}) {
  return spawnRecon(databaseUrl, args, env).done;
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
