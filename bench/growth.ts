import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBenchContext } from './context.ts';
import { benchJsonIngest, benchLegacyIngest } from './ingest.ts';
import { benchMatching } from './matching.ts';
import { benchNightly } from './nightly.ts';
import { openBenchServer } from './scratch-databases.ts';
import type { BenchStep } from './steps.ts';
import { growthTables, type GrowthSize } from './growth-table.ts';

/**
 * Cost growth (issue 13, Proof): ingest, matching and the nightly job at each of several sizes, in
 * one run, on one server (DATABASE_URL's, else the embedded warehouse of RECON_DATA_DIR, where the
 * nightly bench keeps its prepared warehouses). At each size N: the legacy and JSON sections of the
 * ingest bench with files of N rows (loader, re-load, `\copy` baselines, pgloader); the matching bench
 * over N provider transactions, ledger entries and notifications; the nightly bench among a history
 * of N rows and on an empty warehouse. Prints the seconds with the growth against the previous size,
 * then every target ratio of the issue, each marked met or missed, with the load average.
 */
export type GrowthPart = 'ingest' | 'matching' | 'nightly';
export const GROWTH_PARTS: readonly GrowthPart[] = ['ingest', 'matching', 'nightly'];

export interface GrowthOptions {
  readonly sizes: readonly number[];
  readonly parts?: readonly GrowthPart[];
  /** The nightly bench's --reuse and --keep: prepared warehouses are kept and used again. */
  readonly nightlyReuse?: boolean;
  readonly nightlyRepeat?: number;
  readonly nightlyDayRows?: number;
  /** Where the generated files go (a directory per size, removed after it); a temporary one if unset. */
  readonly workDir?: string;
  readonly log: (line: string) => void;
}

export async function benchGrowth(options: GrowthOptions): Promise<GrowthSize[]> {
  const parts = options.parts ?? GROWTH_PARTS;
  const log = options.log;
  const base = options.workDir ?? mkdtempSync(join(tmpdir(), 'recon-growth-'));
  const server = await openBenchServer();
  const ctx = parts.includes('ingest')
    ? await openBenchContext(server.adminUrl, { workDir: base, rows: 0, log, tag: 'growth_' })
    : undefined;
  const sizes: GrowthSize[] = [];
  try {
    for (const rows of options.sizes) {
      const load0 = loadavg()[0]!;
      log(`== growth: ${rows.toLocaleString('en')} rows (load average ${load0.toFixed(1)})`);
      let ingest: GrowthSize['ingest'];
      if (ctx) {
        const workDir = join(base, `rows-${rows}`);
        mkdirSync(workDir, { recursive: true });
        const sized = { ...ctx, workDir, rows };
        try {
          // Each format's databases and files are dropped as soon as it is measured: at 10,000,000
          // rows they hold tens of gigabytes.
          const legacy = await benchLegacyIngest(sized);
          await ctx.dropDatabases();
          rmSync(workDir, { recursive: true, force: true });
          mkdirSync(workDir);
          const json = await benchJsonIngest(sized);
          ingest = {
            legacy: legacy.loader,
            json: json.loader,
            ...(legacy.pgloader ? { pgloader: legacy.pgloader } : {}),
          };
        } finally {
          await ctx.dropDatabases();
          rmSync(workDir, { recursive: true, force: true });
        }
      }
      const matching = parts.includes('matching') ? await benchMatching({ rows, log }) : undefined;
      const nightly = parts.includes('nightly')
        ? await benchNightly({
            historyRows: rows,
            ...(options.nightlyDayRows !== undefined ? { dayRows: options.nightlyDayRows } : {}),
            ...(options.nightlyRepeat !== undefined ? { repeat: options.nightlyRepeat } : {}),
            reuse: options.nightlyReuse ?? false,
            keep: options.nightlyReuse ?? false,
            log,
          })
        : undefined;
      sizes.push({
        rows,
        loadAverage: [load0, loadavg()[0]!],
        ...(ingest ? { ingest } : {}),
        ...(matching ? { matching } : {}),
        ...(nightly ? { nightly } : {}),
      });
    }
  } finally {
    await ctx?.close();
    await server.close();
    if (options.workDir === undefined) rmSync(base, { recursive: true, force: true });
  }
  return sizes;
}

function sizesOf(text: string | undefined): number[] {
  return (text ?? '100000,1000000,10000000').split(',').map((x) => Number(x.replaceAll('_', '').trim()));
}

function partsOf(text: string | undefined): GrowthPart[] {
  if (text === undefined) return [...GROWTH_PARTS];
  const parts = text.split(',').map((x) => x.trim());
  for (const p of parts)
    if (!GROWTH_PARTS.includes(p as GrowthPart)) throw new Error(`unknown growth part ${p}`);
  return parts as GrowthPart[];
}

/**
 * `npm run bench` section, only when BENCH_STEPS names it: BENCH_GROWTH_SIZES (default
 * 100000,1000000,10000000), BENCH_GROWTH_PARTS (ingest,matching,nightly), BENCH_NIGHTLY_REUSE=1,
 * BENCH_GROWTH_NIGHTLY_REPEAT (3), BENCH_NIGHTLY_DAY_ROWS (15,000). Prints its own tables.
 */
export const growthSteps: BenchStep[] = [
  {
    name: 'growth',
    onlyWhenNamed: true,
    async run(c) {
      const sizes = await benchGrowth({
        sizes: sizesOf(process.env.BENCH_GROWTH_SIZES),
        parts: partsOf(process.env.BENCH_GROWTH_PARTS),
        nightlyReuse: process.env.BENCH_NIGHTLY_REUSE === '1',
        ...(process.env.BENCH_GROWTH_NIGHTLY_REPEAT
          ? { nightlyRepeat: Number(process.env.BENCH_GROWTH_NIGHTLY_REPEAT) }
          : {}),
        ...(process.env.BENCH_NIGHTLY_DAY_ROWS
          ? { nightlyDayRows: Number(process.env.BENCH_NIGHTLY_DAY_ROWS) }
          : {}),
        workDir: c.workDir,
        log: c.log,
      });
      process.stdout.write(`${growthTables(sizes)}\n`);
      return [];
    },
  },
];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const sizes = await benchGrowth({
    sizes: sizesOf(arg('--sizes')),
    parts: partsOf(arg('--parts')),
    nightlyReuse: process.argv.includes('--reuse'),
    ...(arg('--repeat') !== undefined ? { nightlyRepeat: Number(arg('--repeat')) } : {}),
    ...(arg('--day-rows') !== undefined ? { nightlyDayRows: Number(arg('--day-rows')) } : {}),
    log: (line) => process.stderr.write(`[growth] ${line}\n`),
  });
  process.stdout.write(`${growthTables(sizes)}\n`);
}
