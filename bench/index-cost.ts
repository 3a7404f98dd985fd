import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runStatement } from './context.ts';
import { generateLegacyType5 } from './generate-files.ts';
import { columnsOf, loadInChild, psql, timed } from './ingest.ts';
import type { BenchContext, BenchResult, BenchStep } from './steps.ts';

/** The tables a legacy type 5 load writes, and their secondary indexes (migration 0028). */
const TABLES = ['legacy_transactions', 'provider_transactions'];
const SECONDARY = [
  'legacy_transactions_on_idx',
  'provider_transactions_on_idx',
  'provider_transactions_mtid_idx',
  'provider_transactions_non_final_idx',
];
/**
 * Autovacuum would analyse the tables just written while the next measurement runs, in backends of
 * the same server: off for the tables measured here (it runs after a load, not during it).
 */
const NO_AUTOVACUUM = TABLES.map((t) => `alter table ${t} set (autovacuum_enabled = false)`);
/** The indexes migration 0028 changed, as they were before it. */
const BEFORE_0028 = [
  'drop index legacy_transactions_on_idx',
  'create index legacy_transactions_on_idx on legacy_transactions (transaction_on)',
  `create index provider_transactions_pending_idx on provider_transactions (transaction_at) where status = 'PENDING'`,
];

/**
 * CPU seconds (user + system) of the server's backends that have ended so far: the postmaster's
 * reaped children, from /proc (Linux, local server); null elsewhere. Each `\copy` and each load runs
 * in backends that end with it, so the difference across one is its server CPU, which a shared
 * machine's load inflates far less than the wall time.
 */
async function serverCpuReader(url: string): Promise<() => number | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const stat = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  let postmaster: string | undefined;
  try {
    // Read while the backend lives: its parent is the postmaster.
    const r = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    postmaster = stat(r.rows[0]!.pid)[1];
  } catch {
    return () => null;
  } finally {
    await client.end();
  }
  return () => {
    try {
      const f = stat(postmaster!);
      return (Number(f[13]) + Number(f[14])) / 100;
    } catch {
      return null;
    }
  };
}

/** Wall seconds and server CPU seconds of `body`. */
async function measured(cpu: () => number | null, body: () => Promise<unknown>) {
  const c0 = cpu();
  const { seconds } = await timed(body);
  // The backends have ended; give the postmaster a moment to reap them.
  await new Promise((r) => setTimeout(r, 300));
  const c1 = cpu();
  return { seconds, cpu: c0 === null || c1 === null ? null : c1 - c0 };
}

const cpuNote = (cpu: number | null) => (cpu === null ? '' : `server CPU ${cpu.toFixed(2)} s`);
/** `a / b` of server CPU, when both were read. */
const cpuRatio = (a: number | null, b: number | null) =>
  a === null || b === null || b === 0 ? '' : ` (${(a / b).toFixed(2)}x in server CPU)`;

/**
 * What each index of the tables the legacy loader writes costs a load (issue 30, section 3), all in
 * one run at ctx.rows lines: the loader against a bare `\copy` of the rows it writes (target 2.5x at
 * most), the loader on the indexes as they were before migration 0028, and `\copy` of the same rows
 * into the real tables as they are and without each secondary index in turn. The load average is
 * printed beside the figures: the machine is shared.
 */
export async function benchIndexCost(ctx: BenchContext): Promise<BenchResult[]> {
  const file = join(ctx.workDir, 'legacy-type5-index-cost.csv');
  ctx.log(`generating ${ctx.rows} legacy type 5 rows`);
  await generateLegacyType5(file, ctx.rows);
  let cpu: () => number | null = () => null;
  const load = async (before0028: boolean) => {
    const url = await ctx.newDatabase();
    for (const s of [...NO_AUTOVACUUM, ...(before0028 ? BEFORE_0028 : [])]) await runStatement(url, s);
    cpu = await serverCpuReader(url);
    let rows = 0;
    const m = await measured(cpu, async () => {
      rows = (await loadInChild(url, 'legacy-transactions', 'legacy', '5', file)).summary.rowsRead;
    });
    return { url, rows, ...m };
  };
  ctx.log('loading with the loader, indexes as migration 0028 leaves them');
  const now = await load(false);
  ctx.log('loading with the loader, indexes as before migration 0028');
  const before = await load(true);

  const files: { table: string; cols: string; csv: string }[] = [];
  for (const table of TABLES) {
    const columns = await columnsOf(now.url, table, ['created_at', 'updated_at']);
    const csv = join(ctx.workDir, `${table}.index-cost.csv`);
    await psql(now.url, `\\copy (select ${columns.join(', ')} from ${table}) to '${csv}' csv`);
    files.push({ table, cols: columns.join(', '), csv });
  }
  /** `\copy` of both tables into a fresh database prepared by `prepare`, seconds. */
  const copy = async (label: string, prepare: string[], into = (t: string) => t) => {
    const url = await ctx.newDatabase();
    await runStatement(
      url,
      `insert into loads (source, environment, origin, format) values ('legacy-transactions', 'staging', 'direct', 'legacy')`,
    );
    for (const s of [...prepare, ...(into('x') === 'x' ? NO_AUTOVACUUM : [])]) await runStatement(url, s);
    ctx.log(`\\copy: ${label}`);
    return measured(cpu, async () => {
      for (const f of files) await psql(url, `\\copy ${into(f.table)} (${f.cols}) from '${f.csv}' csv`);
    });
  };
  const bare = await copy(
    'bare UNLOGGED tables',
    TABLES.map(
      (t) =>
        `create unlogged table bench_${t} (like ${t} including defaults) with (autovacuum_enabled = false)`,
    ),
    (t) => `bench_${t}`,
  );
  const real = await copy('the real tables', []);
  const without: BenchResult[] = [];
  for (const index of SECONDARY) {
    const m = await copy(`without ${index}`, [`drop index ${index}`]);
    const saved = m.cpu === null || real.cpu === null ? '' : `, ${(real.cpu - m.cpu).toFixed(2)} s of CPU`;
    without.push({
      name: `psql \\copy into the real tables without ${index}`,
      rows: now.rows,
      seconds: m.seconds,
      note: `the index costs ${(real.seconds - m.seconds).toFixed(2)} s${saved}; ${cpuNote(m.cpu)}`,
    });
  }
  const load1 = `load ${loadavg()[0]!.toFixed(1)}`;
  return [
    {
      name: 'recon import, legacy type 5 (indexes of migration 0028)',
      rows: now.rows,
      seconds: now.seconds,
      note: `loader / bare \\copy = ${(now.seconds / bare.seconds).toFixed(2)}x${cpuRatio(now.cpu, bare.cpu)} (target <= 2.5x); ${cpuNote(now.cpu)}; ${load1}`,
    },
    {
      name: 'recon import, legacy type 5 (indexes as before migration 0028)',
      rows: before.rows,
      seconds: before.seconds,
      note: `loader / bare \\copy = ${(before.seconds / bare.seconds).toFixed(2)}x${cpuRatio(before.cpu, bare.cpu)}; ${cpuNote(before.cpu)}`,
    },
    {
      name: 'psql \\copy of the same rows into bare UNLOGGED tables',
      rows: now.rows,
      seconds: bare.seconds,
      note: cpuNote(bare.cpu),
    },
    {
      name: 'psql \\copy into the real tables (indexes of migration 0028)',
      rows: now.rows,
      seconds: real.seconds,
      note: `${(real.seconds / bare.seconds).toFixed(2)}x bare; ${cpuNote(real.cpu)}`,
    },
    ...without,
  ];
}

export const indexCostSteps: BenchStep[] = [
  { name: 'index cost', onlyWhenNamed: true, run: (ctx) => benchIndexCost(ctx) },
];
