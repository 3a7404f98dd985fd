import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../db/embedded-warehouse.ts';
import { recon as runRecon, spawnRecon, type ReconRun, ROOT } from '../support/recon-process.ts';

// One answer to the same question everywhere (issue 28, section 3), as a user meets it: real
// `node bin/recon.mjs` processes on the embedded default (no DATABASE_URL), a data directory of their
// own, real postmasters (every one stopped in afterAll).

const BAD_ROWS = join(ROOT, 'test/fixtures/legacy/type5-bad-rows.csv');
const UNKNOWN = /^recon: no account named "nosuch": the accounts are ([a-z0-9, -]+) \(recon accounts list\)$/;

let dir: string;
let dataDir: string;

/** `recon ARGS` on the test's data directory; cwd is the test's directory: no .env of the repository is read. */
function recon(args: string[], extra: Record<string, string> = {}): Promise<ReconRun> {
  return runRecon(undefined, args, { RECON_DATA_DIR: dataDir, ...extra }, { cwd: dir });
}

/** `recon warehouse psql --pipeline` with one query, its rows unaligned. */
async function pipelineQuery(query: string): Promise<string> {
  const r = await recon(['warehouse', 'psql', '--pipeline', '--', '-At', '-c', query]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

function postmasterPid(): number | undefined {
  try {
    return Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}

async function waitFor(condition: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `recon serve` in a process group of its own, as a terminal runs it; `then` runs while it listens;
 * then Ctrl-C as a terminal sends it: SIGINT to the whole group.
 */
async function serveThenCtrlC(then: () => Promise<void>): Promise<ReconRun> {
  const serve = spawnRecon(
    undefined,
    ['serve', '--port', '0'],
    { RECON_DATA_DIR: dataDir },
    { cwd: dir, detached: true },
  );
  await waitFor(() => serve.stdout().includes('workbench listening') || !serve.alive());
  expect(serve.alive(), serve.stderr()).toBe(true);
  await then();
  process.kill(-(serve.child.pid as number), 'SIGINT');
  return serve.done;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'recon-one-answer-'));
  // As root, PostgreSQL runs as `postgres`, which must reach the data directory.
  chmodSync(dir, 0o755);
  dataDir = join(dir, 'data');
});

afterAll(async () => {
  if (!dir) return;
  await recon(['warehouse', 'stop']);
  const pid = postmasterPid();
  if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('Ctrl-C on recon serve', () => {
  it('stops the embedded warehouse that serve started, and nothing else runs on', async () => {
    const served = await serveThenCtrlC(async () => {
      expect(postmasterPid()).toBeDefined();
    });
    expect(served.code, served.stderr).toBe(0);
    const status = await recon(['warehouse', 'status']);
    expect(status.code, status.stdout).toBe(3);
  });

  it('leaves running a warehouse that recon warehouse start took over meanwhile', async () => {
    let pid: number | undefined;
    const served = await serveThenCtrlC(async () => {
      const started = await recon(['warehouse', 'start']);
      expect(started.code, started.stderr).toBe(0);
      pid = postmasterPid();
    });
    expect(served.code, served.stderr).toBe(0);
    expect(pid !== undefined && isAlive(pid)).toBe(true);
    const status = await recon(['warehouse', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('started by `recon warehouse start`');
  });
});

describe('on a running embedded warehouse', () => {
  let hint: string;

  it('an import that rejects rows prints a hint that works as printed, for the analyst login', async () => {
    const r = await recon(['import', '--format', 'legacy', '--query-type', '5', BAD_ROWS]);
    expect(r.code, r.stderr).toBe(0);
    const m = /list them with: recon (warehouse psql -- -c "(.*)")\n$/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    hint = m![2] as string;
    // The printed command, word for word: `recon warehouse psql -- -c "<query>"` (the analyst login).
    const listed = await recon(['warehouse', 'psql', '--', '-At', '-c', hint]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(6);
    expect(listed.stdout).toMatch(/^\d+\|/);
  });

  it('refuses an unknown account the same way from every command (exit 2, one line), and records nothing', async () => {
    // The merchant's system writes a ledger entry of an account this configuration does not name.
    await pipelineQuery(`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents,
      currency, status, booked_at, account) values ('M-US-1', 'DEBIT', 1500, 'USD', 'SUCCESSFUL', '2026-04-01T15:00:00Z', 'us-main')`);
    const runsBefore = await pipelineQuery('select count(*) from reconcile_runs');
    const loadsBefore = await pipelineQuery('select count(*) from loads');

    const warehouseReaders = [
      ['reconcile', '--from', '2026-04-01', '--to', '2026-04-02', '--account', 'nosuch'],
      ['report', '--from', '2026-04-01', '--to', '2026-04-02', '--account', 'nosuch'],
    ];
    const configured = [
      ['import', '--format', 'legacy', '--query-type', '5', '--account', 'nosuch', BAD_ROWS],
      ['ledger', 'import', '--account', 'nosuch', join(ROOT, 'test/fixtures/ledger/ledger.csv')],
      [
        'pull',
        '--source',
        'report-transactions',
        '--from',
        '2026-04-01',
        '--to',
        '2026-04-02',
        '--account',
        'nosuch',
      ],
      ['backfill', '--from', '2026-04-01', '--to', '2026-04-02', '--account', 'nosuch'],
      ['accounts', 'check', '--account', 'nosuch'],
    ];
    for (const [args, known] of [
      ...warehouseReaders.map((a) => [a, 'default, us-main'] as const),
      ...configured.map((a) => [a, 'default'] as const),
    ]) {
      const r = await recon([...args]);
      const [first, second] = r.stderr.split('\n');
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(first, args.join(' ')).toMatch(UNKNOWN);
      expect(UNKNOWN.exec(first as string)?.[1], args.join(' ')).toBe(known);
      expect(second).toBe(
        `see recon ${args[0] === 'ledger' || args[0] === 'accounts' ? `${args[0]} ${args[1]}` : args[0]} --help`,
      );
      expect(r.stdout).toBe('');
    }
    expect(await pipelineQuery('select count(*) from reconcile_runs')).toBe(runsBefore);
    expect(await pipelineQuery('select count(*) from loads')).toBe(loadsBefore);

    // An account the warehouse holds data for is known to the commands that read the warehouse.
    const report = await recon([
      'report',
      '--from',
      '2026-04-01',
      '--to',
      '2026-04-02',
      '--account',
      'us-main',
    ]);
    expect(report.code, report.stderr).toBe(0);
  });

  it('recon accounts list shows the configured accounts and those the warehouse holds data for, and which is which', async () => {
    const text = await recon(['accounts', 'list']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('default (staging): configured, data in the warehouse');
    expect(text.stdout).toContain('in the warehouse, not configured here: us-main');

    const json = await recon(['accounts', 'list', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as { name: string; configured: boolean; inWarehouse: boolean }[];
    expect(listed.map(({ name, configured, inWarehouse }) => ({ name, configured, inWarehouse }))).toEqual([
      { name: 'default', configured: true, inWarehouse: true },
      { name: 'us-main', configured: false, inWarehouse: true },
    ]);
  });

  it('recon import of a directory is an unreadable input: exit 2, one line', async () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const r = await recon(['import', '--format', 'report-json', folder]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(`recon: ${folder}: cannot be read (is a directory): give the path of a file\n`);
    expect(r.stdout).toBe('');
  });
});
