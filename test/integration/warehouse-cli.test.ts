import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isAlive } from '../../db/embedded-warehouse.ts';
import { withDatabase } from '../global-setup.ts';
import { recon as runRecon, spawnRecon, type ReconRun, ROOT } from '../support/recon-process.ts';

// `recon warehouse` and the embedded warehouse as a user meets them: real `node bin/recon.mjs`
// processes on a data directory of their own, real postmasters (every one stopped in afterAll).

const FIXTURE = join(ROOT, 'test/fixtures/report/transactions-and-returns.json');
const IMPORT = ['import', '--format', 'report-json', FIXTURE];

let dir: string;
let dataDir: string;

/** `recon ARGS` on the test's data directory; cwd is the test's directory: no .env of the repository is read. */
function recon(args: string[], extra: Record<string, string> = {}): Promise<ReconRun> {
  return runRecon(undefined, args, { RECON_DATA_DIR: dataDir, ...extra }, { cwd: dir });
}

function postmasterPid(): number | undefined {
  try {
    return Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}

function alive(pid: number | undefined): boolean {
  return pid !== undefined && isAlive(pid);
}

async function waitFor(condition: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A long-running command (the receiver) SIGKILLed while it holds the embedded server it started. */
async function killMidCommand(): Promise<number> {
  const { child, stdout } = spawnRecon(
    undefined,
    ['notifications', 'serve'],
    { RECON_DATA_DIR: dataDir, PORT: '0', RECON_NOTIFICATION_SECRET: 'test-secret' },
    { cwd: dir },
  );
  await waitFor(() => stdout().includes('listening'), 60_000);
  const pid = postmasterPid();
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  return pid as number;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'recon-warehouse-cli-'));
  // As root, PostgreSQL runs as `postgres`, which must reach the data directory.
  chmodSync(dir, 0o755);
  dataDir = join(dir, 'data');
});

afterAll(async () => {
  if (!dir) return;
  await recon(['warehouse', 'stop']);
  const pid = postmasterPid();
  if (alive(pid)) {
    process.kill(pid as number, 'SIGKILL');
    await waitFor(() => !alive(pid), 5_000).catch(() => {});
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the embedded warehouse between commands', () => {
  it('is migrated by the first command, keeps what one process loaded for the next, and stops after each', async () => {
    const loaded = await recon(IMPORT);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(loaded.stderr).toContain('recon: migrated the embedded warehouse');
    expect(JSON.parse(loaded.stdout)).toMatchObject({ status: 'committed', rowsLoaded: 5 });
    // The command started the server and was its last user: nothing keeps running.
    expect(alive(postmasterPid())).toBe(false);

    const count = await recon([
      'warehouse',
      'psql',
      '--pipeline',
      '--',
      '-Atc',
      'select (select count(*) from provider_transactions), (select count(*) from provider_returns)',
    ]);
    expect(count.code, count.stderr).toBe(0);
    expect(count.stdout.trim()).toBe('3|2');

    const reconciled = await recon(['reconcile', '--from', '2026-03-01', '--to', '2026-03-31', '--json']);
    expect(reconciled.code, reconciled.stderr).toBe(0);
    const report = await recon(['report', '--from', '2026-03-01', '--to', '2026-03-31']);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain('missing_in_ledger');
    expect(report.stdout).toContain('2026-03-08');
    expect(report.stderr).not.toContain('migrated');
    expect(alive(postmasterPid())).toBe(false);
  });

  it('two commands started at once share the server: the second waits for the first to start it, neither stops it under the other', async () => {
    const failures: string[] = [];
    const later = (ms: number, args: string[]) =>
      new Promise((r) => setTimeout(r, ms)).then(() => recon(args));
    // Staggered: a command arrives while another starts the server, uses it or stops it.
    for (let round = 0; round < 8; round++) {
      const runs = await Promise.all([
        recon(['reconcile', '--from', '2026-03-01', '--to', '2026-03-31', '--json']),
        later(150 * round, ['report', '--from', '2026-03-01', '--to', '2026-03-31']),
        later(300 * round, ['report', '--from', '2026-03-01', '--to', '2026-03-31', '--json']),
      ]);
      for (const run of runs) if (run.code !== 0) failures.push(run.stderr);
    }
    expect(failures).toEqual([]);
    expect(alive(postmasterPid())).toBe(false);
  }, 300_000);

  it('recon warehouse start keeps one server up for every later command, url gives an analyst login, stop stops it', async () => {
    const stopped = await recon(['warehouse', 'status']);
    expect(stopped.code).toBe(3);
    expect(stopped.stdout).toMatch(/^warehouse stopped/);

    const start = await recon(['warehouse', 'start']);
    expect(start.code, start.stderr).toBe(0);
    const pid = postmasterPid();
    expect(alive(pid)).toBe(true);
    expect(start.stdout).toContain(`warehouse started: pid ${pid}`);
    const pipelinePassword = readFileSync(join(dataDir, 'postgres.password'), 'utf8').trim();
    expect(pipelinePassword).toMatch(/^[\w-]{20,}$/);
    expect(start.stdout + start.stderr).not.toContain(pipelinePassword);
    for (const file of ['postgres.password', 'analyst.password']) {
      expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600);
    }

    const status = await recon(['warehouse', 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`warehouse running: pid ${pid}`);
    expect(status.stdout).toContain('started by `recon warehouse start`');

    // Commands use the running server (no second postmaster) and leave it running.
    const [a, b] = await Promise.all([
      recon(['report', '--from', '2026-04-01', '--to', '2026-04-02']),
      recon(IMPORT),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(postmasterPid()).toBe(pid);
    expect(alive(pid)).toBe(true);

    const url = await recon(['warehouse', 'url']);
    expect(url.code, url.stderr).toBe(0);
    expect(url.stdout).toMatch(/^pipeline: postgres:\/\/postgres:.+@127\.0\.0\.1:\d+\/postgres$/m);
    expect(url.stdout).toMatch(/^analyst: {2}postgres:\/\/analyst:.+@127\.0\.0\.1:\d+\/postgres$/m);
    const analyst = (await recon(['warehouse', 'url', '--role', 'analyst'])).stdout.trim();
    const client = new pg.Client({ connectionString: analyst });
    await client.connect();
    try {
      const { rows } = await client.query<{ user: string; member: boolean; n: string }>(
        `select current_user as user, pg_has_role('recon_analyst', 'member') as member,
                (select count(*) from open_discrepancies) as n`,
      );
      expect(rows[0]).toMatchObject({ user: 'analyst', member: true });
      await expect(client.query('select consumer_email from legacy_transactions')).rejects.toThrow(
        /permission denied/,
      );
    } finally {
      await client.end();
    }

    const psql = await recon(['warehouse', 'psql', '--', '-Atc', 'select current_user']);
    expect(psql.code, psql.stderr).toBe(0);
    expect(psql.stdout.trim()).toBe('analyst');

    const stop = await recon(['warehouse', 'stop']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toBe(`warehouse stopped (pid ${pid})\n`);
    expect(alive(pid)).toBe(false);
    expect((await recon(['warehouse', 'status'])).code).toBe(3);
    expect((await recon(['warehouse', 'stop'])).stdout).toBe('warehouse is not running\n');
  });

  it('replaces the guessable superuser password of a data directory made before passwords were generated', async () => {
    expect((await recon(['warehouse', 'start'])).code).toBe(0);
    const pipeline = (await recon(['warehouse', 'url', '--role', 'pipeline'])).stdout.trim();
    const client = new pg.Client({ connectionString: pipeline });
    await client.connect();
    await client.query(`alter role postgres password 'postgres'`);
    await client.end();
    expect((await recon(['warehouse', 'stop'])).code).toBe(0);
    rmSync(join(dataDir, 'postgres.password'));

    const report = await recon(['report', '--from', '2026-04-01', '--to', '2026-04-02']);
    expect(report.code, report.stderr).toBe(0);
    const password = readFileSync(join(dataDir, 'postgres.password'), 'utf8').trim();
    expect(password).not.toBe('postgres');
    expect(statSync(join(dataDir, 'postgres.password')).mode & 0o777).toBe(0o600);
    expect((await recon(['warehouse', 'psql', '--pipeline', '--', '-Atc', 'select 1'])).stdout).toBe('1\n');
  });

  it('a postmaster orphaned by a SIGKILLed command is adopted by the next command, which stops it', async () => {
    const orphan = await killMidCommand();
    expect(alive(orphan)).toBe(true);
    const status = await recon(['warehouse', 'status']);
    expect(status.stdout).toContain(`warehouse running: pid ${orphan}`);
    expect(status.stdout).toContain('started by a command');

    const report = await recon(['report', '--from', '2026-04-01', '--to', '2026-04-02']);
    expect(report.code, report.stderr).toBe(0);
    expect(alive(orphan)).toBe(false);
  });

  it('recon warehouse stop stops a postmaster orphaned by a SIGKILLed command', async () => {
    const orphan = await killMidCommand();
    expect(alive(orphan)).toBe(true);
    const stop = await recon(['warehouse', 'stop']);
    expect(stop.stdout).toBe(`warehouse stopped (pid ${orphan})\n`);
    expect(alive(orphan)).toBe(false);
  });
});

describe('an external warehouse (DATABASE_URL) that is not migrated', () => {
  it('refuses every command that needs the schema with one line and exit 2, until recon migrate', async () => {
    const adminUrl = inject('pgAdminUrl');
    const name = `recon_unmigrated_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    try {
      const url = withDatabase(adminUrl, name);
      const { hostname, password } = new URL(adminUrl);
      const host = hostname.replace(/\./g, '\\.');
      for (const args of [
        ['report', '--from', '2026-04-01', '--to', '2026-04-02'],
        ['reconcile', '--from', '2026-04-01', '--to', '2026-04-02'],
        IMPORT,
      ]) {
        const r = await recon(args, { DATABASE_URL: url });
        expect(r.code, args[0]).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(
          new RegExp(
            `^recon: the warehouse at ${host}:\\d+/${name} is not migrated .*: run \`recon migrate\`\\n$`,
          ),
        );
        expect(r.stderr).not.toContain('does not exist');
        expect(r.stderr).not.toContain(password);
      }
      expect((await recon(['migrate'], { DATABASE_URL: url })).code).toBe(0);
      const r = await recon(['report', '--from', '2026-04-01', '--to', '2026-04-02'], { DATABASE_URL: url });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
