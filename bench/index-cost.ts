import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { queryRows, runStatement } from './context.ts';
import { middle as median } from './figures.ts';
import { generateLegacyType5 } from './generate-files.ts';
import { columnsOf, loadInChild, psql, timed } from './ingest.ts';
import { type ScheduleSplit, ScheduleWatch } from './schedule-split.ts';
import { WaitEvents } from './wait-events.ts';
import type { BenchContext, BenchResult, BenchStep } from './steps.ts';

/** The tables a legacy type 5 load writes, and their secondary indexes (migrations 0028, 0042). */
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
 * Other forms of the indexes, each loaded by the loader in every round beside the schema as it is
 * (BENCH_INDEX_FORMS=btree-on: the B-tree migration 0042 made a BRIN index; `hash`: merchant ids as a
 * hash index, tried and not kept; `brin`, `btree`: the schema's forms; `keys-compressed`: the change log's
 * keys compressed, as before migration 0045; joined by `+`): what a form
 * costs or saves a load against the schema, in the same minutes as the bare `\copy` it is compared with.
 */
const FORMS: Record<string, readonly string[]> = {
  hash: [
    'drop index provider_transactions_mtid_idx',
    'create index provider_transactions_mtid_idx on provider_transactions using hash (merchant_transaction_id)',
  ],
  btree: [
    'drop index provider_transactions_mtid_idx',
    'create index provider_transactions_mtid_idx on provider_transactions (account, merchant_transaction_id)',
  ],
  'btree-on': [
    'drop index provider_transactions_on_idx',
    'create index provider_transactions_on_idx on provider_transactions (transaction_on)',
  ],
  // The change log's key arrays compressed, as before migration 0045.
  'keys-compressed': [
    `alter table recon_work.changed_keys ${[
      'transaction_ids',
      'merchant_transaction_ids',
      'return_transaction_ids',
    ]
      .map((c) => `alter column ${c} set storage extended`)
      .join(', ')}`,
  ],
  brin: [
    'drop index provider_transactions_on_idx',
    `create index provider_transactions_on_idx on provider_transactions using brin (transaction_on)
      with (pages_per_range = 32, autosummarize = on)`,
  ],
};
const formStatements = (form: string) =>
  form.split('+').flatMap((f) => {
    const s = FORMS[f];
    if (!s) throw new Error(`BENCH_INDEX_FORMS: unknown form ${f} (known: ${Object.keys(FORMS).join(', ')})`);
    return s;
  });
const FORMS_ASKED = (process.env.BENCH_INDEX_FORMS ?? '').split(',').filter((f) => f !== '');

/**
 * CPU seconds (user + system) of the server's backends that have ended so far: the postmaster's
 * reaped children, from /proc (Linux, local server); null elsewhere. Each `\copy` and each load runs
 * in backends that end with it, so the difference across one is its server CPU, which a shared
 * machine's load inflates far less than the wall time.
 */
async function serverCpuReader(url: string): Promise<{ cpu: () => number | null; postmaster?: string }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const stat = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  let postmaster: string | undefined;
  try {
    // Read while the backend lives: its parent is the postmaster.
    const r = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    postmaster = stat(r.rows[0]!.pid)[1];
  } catch {
    return { cpu: () => null };
  } finally {
    await client.end();
  }
  const cpu = () => {
    try {
      const f = stat(postmaster!);
      return (Number(f[13]) + Number(f[14])) / 100;
    } catch {
      return null;
    }
  };
  return { cpu, postmaster };
}

/** Wall seconds and server CPU seconds of `body`. */
async function measured(cpu: () => number | null, body: () => Promise<unknown>): Promise<Measure> {
  const c0 = cpu();
  const { seconds } = await timed(body);
  // The backends have ended; give the postmaster a moment to reap them.
  await new Promise((r) => setTimeout(r, 300));
  const c1 = cpu();
  return { seconds, cpu: c0 === null || c1 === null ? null : c1 - c0 };
}

/** One measured load or `\copy`: wall seconds, server CPU seconds, and the loader's own CPU seconds. */
interface Measure {
  readonly seconds: number;
  readonly cpu: number | null;
  readonly nodeCpu?: number;
  /** The load itself (its summary's durationMs): the command's wall time without the process's start and end. */
  readonly loadSeconds?: number;
  /** Where the wall time of the loader's main thread and of the busiest backend went (schedule-split.ts). */
  readonly node?: ScheduleSplit | null;
  readonly backend?: ScheduleSplit | null;
  /** What the load's backend waited for off a CPU (wait-events.ts). */
  readonly waits?: string;
  /** The WAL the server wrote during the load, bytes (the whole server's: nothing else runs then). */
  readonly walBytes?: number;
}

/** `median (min–max over n)`, or the one figure. */
function spread(xs: readonly number[], digits = 2, unit = ' s'): string {
  const f = (x: number) => x.toFixed(digits);
  if (xs.length === 1) return `${f(xs[0]!)}${unit}`;
  return `${f(median(xs))}${unit} (${f(Math.min(...xs))}–${f(Math.max(...xs))} over ${xs.length} runs)`;
}
const mib = (bytes: number | undefined) =>
  bytes === undefined ? '?' : `${(bytes / 1048576).toFixed(0)} MiB`;
const cpus = (ms: readonly Measure[]) => ms.flatMap((m) => (m.cpu === null ? [] : [m.cpu]));
const cpuNote = (ms: readonly Measure[]) => (cpus(ms).length === 0 ? '' : `server CPU ${spread(cpus(ms))}`);
/** The ratios a / b taken within each round (the same minutes of the shared machine), wall and server CPU. */
function ratios(a: readonly Measure[], b: readonly Measure[]): string {
  const wall = a.map((m, i) => m.seconds / b[i]!.seconds);
  const cpu = a.flatMap((m, i) => (m.cpu === null || !b[i]!.cpu ? [] : [m.cpu / b[i]!.cpu]));
  return `${spread(wall, 2, 'x')} wall${cpu.length === 0 ? '' : `, ${spread(cpu, 2, 'x')} server CPU`}`;
}
const nodeNote = (ms: readonly Measure[]) => {
  const xs = ms.flatMap((m) => (m.nodeCpu === undefined ? [] : [m.nodeCpu]));
  const load = ms.flatMap((m) => (m.loadSeconds === undefined ? [] : [m.loadSeconds]));
  const wal = ms.flatMap((m) => (m.walBytes === undefined ? [] : [m.walBytes / 1048576]));
  return xs.length === 0
    ? ''
    : `; the loader's own CPU ${spread(xs)}; the load itself (without the process's start) ${spread(load)}; WAL ${spread(wal, 0, ' MiB')}`;
};
/**
 * Where the wall time of the load's backend and of the loader's main thread went, over the rounds:
 * the backend asleep is the server waiting for Node (Client:ClientRead among its wait events) or for
 * its own writes (WAL, data files); Node asleep, Node waiting for the server.
 */
function overlapNote(ms: readonly Measure[]): string {
  const backend = ms.flatMap((m) => (m.backend ? [m.backend] : []));
  const node = ms.flatMap((m) => (m.node ? [m.node] : []));
  if (backend.length === 0 || node.length === 0) return '';
  const f = (xs: ScheduleSplit[], k: keyof ScheduleSplit) => spread(xs.map((x) => x[k]));
  const waits = ms.map((m, i) => `round ${i + 1}: ${m.waits ?? ''}`).join('; ');
  return (
    `; the load's backend ${f(backend, 'cpu')} on a CPU, ${f(backend, 'waitingForCpu')} waiting for one, ` +
    `${f(backend, 'asleep')} asleep (Node, or the server's own writes; its wait events off a CPU, ${waits}); the loader's main thread ${f(node, 'cpu')} on a CPU, ` +
    `${f(node, 'waitingForCpu')} waiting for one, ${f(node, 'asleep')} asleep (waiting for the server)`
  );
}

/** The load itself (no process start) against b's wall, within each round. */
function loadRatios(a: readonly Measure[], b: readonly Measure[]): string {
  return spread(
    a.map((m, i) => (m.loadSeconds ?? m.seconds) / b[i]!.seconds),
    2,
    'x',
  );
}
/** The change-capture triggers of migration 0027 that a first legacy load fires (one per COPY). */
const NO_CAPTURE = TABLES.map((t) => `drop trigger ${t}_changed_keys_insert on ${t}`);

/** What the rounds measured: the loader and the `\copy`s, each round's load average. */
interface Rounds {
  loader: Measure[];
  loaderNoCapture: Measure[];
  bare: Measure[];
  real: Measure[];
  realNoCapture: Measure[];
  /** The loader with each other form of BENCH_INDEX_FORMS, by form. */
  forms: Record<string, Measure[]>;
  loads: number[];
}

/**
 * The loader and `\copy` into fresh databases of ctx's server, on the rows of `file`: `load` runs
 * `recon import` of it (in a child, its own CPU read), `copy` a `\copy` of the rows the first load
 * wrote (`exportRows` must run after that first load).
 */
function measurer(ctx: BenchContext, file: string) {
  let server: { cpu: () => number | null; postmaster?: string } = { cpu: () => null };
  const cpu = () => server.cpu();
  const files: { table: string; cols: string; csv: string }[] = [];
  const out = {
    rows: 0,
    async load(label: string, prepare: string[], warm = true) {
      const url = await ctx.newDatabase();
      for (const s of [...NO_AUTOVACUUM, ...prepare, ...(warm ? [CHECKPOINT] : [])])
        await runStatement(url, s);
      server = await serverCpuReader(url);
      const wal0 = await walPosition(url);
      ctx.log(`loading with the loader, ${label}`);
      let nodeCpu = 0;
      let loadSeconds = 0;
      let pid: number | undefined;
      const watch = server.postmaster === undefined ? null : new ScheduleWatch(server.postmaster);
      const waits = await WaitEvents.start(url);
      const m = await measured(cpu, async () => {
        const child = await loadInChild(url, 'legacy-transactions', 'legacy', '5', file, (p) => {
          pid = p;
          watch?.watch(p);
        });
        out.rows = child.summary.rowsRead;
        nodeCpu = child.cpuSeconds;
        loadSeconds = child.summary.durationMs / 1000;
      });
      const split = watch?.stop(pid);
      return {
        walBytes: await walBytesSince(url, wal0),
        waits: await waits.stop(),
        url,
        ...m,
        nodeCpu,
        loadSeconds,
        node: split?.process ?? null,
        backend: split?.backend ?? null,
      };
    },
    async exportRows(url: string) {
      for (const table of TABLES) {
        const columns = await columnsOf(url, table, ['created_at', 'updated_at']);
        const csv = join(ctx.workDir, `${table}.index-cost.csv`);
        await psql(url, `\\copy (select ${columns.join(', ')} from ${table}) to '${csv}' csv`);
        files.push({ table, cols: columns.join(', '), csv });
      }
    },
    /** `\copy` of both tables into a fresh database prepared by `prepare`. */
    async copy(label: string, prepare: string[], into = (t: string) => t) {
      const url = await ctx.newDatabase();
      await runStatement(
        url,
        `insert into loads (source, environment, origin, format) values ('legacy-transactions', 'staging', 'direct', 'legacy')`,
      );
      for (const s of [...prepare, ...(into('x') === 'x' ? NO_AUTOVACUUM : []), CHECKPOINT])
        await runStatement(url, s);
      ctx.log(`\\copy: ${label}`);
      return measured(cpu, async () => {
        for (const f of files) await psql(url, `\\copy ${into(f.table)} (${f.cols}) from '${f.csv}' csv`);
      });
    },
  };
  return out;
}

/**
 * Before each measured load and \`\copy\`: a running server has recycled the WAL segments of its
 * earlier writes at its checkpoints (at least every checkpoint_timeout), so a load writes into
 * segments that exist; a new server creates and zero-fills each segment the first time (WalInitWrite,
 * WalInitSync), which the bench's first load pays and prints apart (docs/benchmark-record.md §3).
 */
const CHECKPOINT = 'checkpoint';

async function walPosition(url: string): Promise<string> {
  return (await queryRows<{ lsn: string }>(url, 'select pg_current_wal_lsn()::text as lsn'))[0]!.lsn;
}

async function walBytesSince(url: string, lsn: string): Promise<number> {
  const r = await queryRows<{ n: string }>(
    url,
    'select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text as n',
    [lsn],
  );
  return Number(r[0]!.n);
}

const BARE_TABLES = TABLES.map(
  (t) => `create unlogged table bench_${t} (like ${t} including defaults) with (autovacuum_enabled = false)`,
);

/**
 * `repeat` rounds of the loader and `\copy`, with and without the change-capture triggers; with
 * `targetOnly`, the loader and the bare `\copy` alone (the target's two figures: what a 10,000,000-line
 * run can afford).
 */
async function rounds(m: ReturnType<typeof measurer>, repeat: number, targetOnly: boolean): Promise<Rounds> {
  const r: Rounds = {
    loader: [],
    loaderNoCapture: [],
    bare: [],
    real: [],
    realNoCapture: [],
    forms: Object.fromEntries(FORMS_ASKED.map((f) => [f, []])),
    loads: [],
  };
  for (let round = 0; round < repeat; round++) {
    r.loader.push(await m.load('indexes as migrated', []));
    for (const f of FORMS_ASKED) r.forms[f]!.push(await m.load(`indexes as ${f}`, formStatements(f)));
    if (!targetOnly) r.loaderNoCapture.push(await m.load('without the change-capture triggers', NO_CAPTURE));
    r.bare.push(await m.copy('bare UNLOGGED tables', BARE_TABLES, (t) => `bench_${t}`));
    if (!targetOnly) {
      r.real.push(await m.copy('the real tables', []));
      r.realNoCapture.push(await m.copy('the real tables without the change-capture triggers', NO_CAPTURE));
    }
    r.loads.push(loadavg()[0]!);
  }
  return r;
}

/**
 * What each index of the tables the legacy loader writes costs a load (issue 30, section 3), all in
 * one run at ctx.rows lines: the loader against a bare `\copy` of the rows it writes (target 2.5x at
 * most), the loader and `\copy` into the real tables with and without the change-capture triggers of
 * migration 0027, each BENCH_REPEAT times (default 1) in rounds after a checkpoint ({@link CHECKPOINT};
 * the new server's first load, before any, printed apart), the ratios taken within a round; then
 * once the loader on the indexes as they were before migration 0028, and `\copy` into the real tables
 * without each secondary index in turn. The load average is printed beside the figures: the machine
 * is shared.
 */
export async function benchIndexCost(ctx: BenchContext): Promise<BenchResult[]> {
  const file = join(ctx.workDir, 'legacy-type5-index-cost.csv');
  ctx.log(`generating ${ctx.rows} legacy type 5 rows`);
  await generateLegacyType5(file, ctx.rows);
  const m = measurer(ctx, file);
  // The new server's first load: every WAL segment it writes is created first (not a round's figure).
  const first = await m.load("indexes as migrated, the new server's first load", [], false);
  // Printed at once: a large run can still fail afterwards (a full disk during the \copy).
  ctx.log(
    `the first load: wall ${first.seconds.toFixed(2)} s, server CPU ${first.cpu?.toFixed(2) ?? '?'} s, the loader's own CPU ${first.nodeCpu.toFixed(2)} s, WAL ${mib(first.walBytes)}, load average ${loadavg()[0]!.toFixed(1)}`,
  );
  await m.exportRows(first.url);
  // Its rows are in the CSV files now: their space is the \copy's (10,000,000 lines fill gigabytes).
  await runStatement(first.url, 'truncate legacy_transactions, provider_transactions cascade');
  // BENCH_INDEX_TARGET_ONLY=1: the loader and the bare \copy only (implies BENCH_INDEX_DROPS=0).
  const targetOnly = process.env.BENCH_INDEX_TARGET_ONLY === '1';
  const r = await rounds(m, Math.max(1, Number(process.env.BENCH_REPEAT ?? 1)), targetOnly);
  // BENCH_INDEX_DROPS=0 leaves out the loads and \copys of other indexes (a large size's run time).
  const drops = process.env.BENCH_INDEX_DROPS !== '0' && !targetOnly;
  const before = drops ? await m.load('indexes as before migration 0028', BEFORE_0028) : null;
  const without: BenchResult[] = [];
  const realCpu = cpus(r.real).length === 0 ? null : median(cpus(r.real));
  for (const index of drops ? SECONDARY : []) {
    const w = await m.copy(`without ${index}`, [`drop index ${index}`]);
    const saved = w.cpu === null || realCpu === null ? '' : `, ${(realCpu - w.cpu).toFixed(2)} s of CPU`;
    without.push({
      name: `psql \\copy into the real tables without ${index}`,
      rows: m.rows,
      seconds: w.seconds,
      note: `the index costs ${(median(r.real.map((x) => x.seconds)) - w.seconds).toFixed(2)} s${saved} (against the median); ${cpuNote([w])}`,
    });
  }
  const line = (name: string, ms: Measure[], note: string): BenchResult => ({
    name,
    rows: m.rows,
    seconds: median(ms.map((x) => x.seconds)),
    note: `wall ${spread(ms.map((x) => x.seconds))}; ${cpuNote(ms)}${nodeNote(ms)}${note}`,
  });
  return [
    line(
      'recon import, legacy type 5 (indexes as migrated)',
      r.loader,
      `; loader / bare \\copy = ${ratios(r.loader, r.bare)} (target <= 2.5x), the load itself / bare \\copy = ${loadRatios(r.loader, r.bare)} wall${overlapNote(r.loader)}; load average ${spread(r.loads, 1, '')}`,
    ),
    line(
      "recon import, the new server's first load (no checkpoint before it: WAL segments created)",
      [first],
      `; / the first round's bare \\copy = ${ratios([first], r.bare.slice(0, 1))}${overlapNote([first])}`,
    ),
    ...Object.entries(r.forms).map(([f, ms]) =>
      line(
        `recon import, indexes as ${f} (BENCH_INDEX_FORMS)`,
        ms,
        `; / bare \\copy = ${ratios(ms, r.bare)}, the load itself / bare \\copy = ${loadRatios(ms, r.bare)} wall; / the schema as it is = ${ratios(ms, r.loader)}${overlapNote(ms)}`,
      ),
    ),
    ...(targetOnly
      ? []
      : [
          line(
            'recon import without the change-capture triggers of migration 0027',
            r.loaderNoCapture,
            `; / bare \\copy = ${ratios(r.loaderNoCapture, r.bare)}; with them / without = ${ratios(r.loader, r.loaderNoCapture)}`,
          ),
        ]),
    ...(before ? [line('recon import, indexes as before migration 0028', [before], '')] : []),
    line('psql \\copy of the same rows into bare UNLOGGED tables', r.bare, ''),
    ...(targetOnly
      ? []
      : [
          line(
            'psql \\copy into the real tables (indexes as migrated)',
            r.real,
            `; / bare = ${ratios(r.real, r.bare)}`,
          ),
          line(
            'psql \\copy into the real tables without the change-capture triggers',
            r.realNoCapture,
            `; with them / without = ${ratios(r.real, r.realNoCapture)}`,
          ),
        ]),
    ...without,
  ];
}

export const indexCostSteps: BenchStep[] = [
  { name: 'index cost', onlyWhenNamed: true, run: (ctx) => benchIndexCost(ctx) },
];
