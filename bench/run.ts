import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres } from '../db/connect.ts';
import { openBenchContext } from './context.ts';
import { growthSteps } from './growth.ts';
import { indexCostSteps } from './index-cost.ts';
import { ingestSteps } from './ingest.ts';
import { receiverSteps } from './receiver.ts';
import type { BenchContext, BenchResult, BenchStep } from './steps.ts';
import { nightlySteps } from './nightly.ts';
import { previewSteps } from './preview.ts';
import { followUpSteps } from './nightly-follow-up.ts';
import { nightlyChangesSteps } from './nightly-changes.ts';
import { windowCostSteps } from './window-cost.ts';
import { workbenchSteps } from './workbench.ts';
import type { ChangedRerun } from './matching-changes.ts';

/**
 * `npm run bench`: generates large provider files in a temporary directory (never committed), loads
 * them into a fresh PostgreSQL (embedded, or DATABASE_URL's server: a database per load is created
 * and dropped there), and prints rows/s, peak RSS and the comparison with psql \copy and pgloader.
 * Other sections join by exporting `steps: BenchStep[]` from bench/matching.ts.
 * BENCH_ROWS sets the rows per file (default 1,000,000); BENCH_STEPS selects sections. The growth
 * section (bench/growth.ts: every measure at several sizes) runs only when BENCH_STEPS names it.
 */
const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const workDir = mkdtempSync(join(tmpdir(), 'recon-bench-'));
// As root the embedded server runs as the `postgres` user, which must reach its data directory inside.
chmodSync(workDir, 0o755);
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

let adminUrl = process.env.DATABASE_URL;
let stop = async () => {};
if (!adminUrl) {
  log('starting an embedded PostgreSQL');
  const server = await startEmbeddedPostgres(join(workDir, 'pg'), { persistent: false });
  adminUrl = server.connectionString;
  stop = server.stop;
}

const ctx = await openBenchContext(adminUrl, { workDir, rows, log });

// window-cost and nightly open DATABASE_URL themselves: point it at this run's server.
const steps: BenchStep[] = [
  ...ingestSteps,
  ...indexCostSteps,
  ...receiverSteps,
  ...workbenchSteps,
  ...[
    ...windowCostSteps,
    ...nightlySteps,
    ...followUpSteps,
    ...nightlyChangesSteps,
    ...previewSteps,
    ...growthSteps,
  ].map((s) => ({
    ...s,
    run: (c: BenchContext) => ((process.env.DATABASE_URL = adminUrl), s.run(c)),
  })),
];
const matching = fileURLToPath(new URL('./matching.ts', import.meta.url));
if (existsSync(matching)) {
  const module = (await import(matching)) as {
    steps?: BenchStep[];
    benchMatching?: (o: { rows?: number; log?: (line: string) => void }) => Promise<{
      rows: number;
      firstRunSeconds: number;
      floor: { joinSeconds: number; claimsSeconds: number; seconds: number };
      firstRunOverFloor: number;
      floorCpuSeconds: number | null;
      firstRunCpuSeconds: number | null;
      rerunSeconds: number;
      rerunCpuSeconds: number | null;
      changedRerunSeconds: number;
      changedReruns: {
        one: ChangedRerun;
        four: ChangedRerun;
      };
      discrepancies: number;
      nodePeakRssMiB: number;
    }>;
  };
  steps.push(...(module.steps ?? []));
  const benchMatching = module.benchMatching;
  if (!module.steps && benchMatching) {
    steps.push({
      name: 'matching',
      async run(c) {
        // benchMatching opens DATABASE_URL itself: point it at this run's server.
        process.env.DATABASE_URL = adminUrl;
        const f = await benchMatching({ rows: c.rows, log: c.log });
        const load = `load ${loadavg()[0]!.toFixed(1)}`;
        const cpu =
          f.floorCpuSeconds && f.firstRunCpuSeconds
            ? `; PostgreSQL CPU ${f.firstRunCpuSeconds} s against ${f.floorCpuSeconds} s: ${(f.firstRunCpuSeconds / f.floorCpuSeconds).toFixed(2)}x`
            : '';
        return [
          {
            name: 'floor: parallel CREATE UNLOGGED TABLE AS provider ⋈ ledger ⋈ latest notification',
            rows: f.rows,
            seconds: f.floor.joinSeconds,
          },
          {
            name: 'floor: the two claim inserts, sorted, into tables with the claims unique keys',
            rows: f.rows,
            seconds: f.floor.claimsSeconds,
          },
          {
            name: 'reconcileRange, first run',
            rows: f.rows,
            seconds: f.firstRunSeconds,
            note: `${f.discrepancies} discrepancies; ${f.firstRunOverFloor}x the floor (${f.floor.seconds.toFixed(2)} s; target <= 1.5x)${cpu}; ${load}`,
          },
          {
            name: 'reconcileRange, re-run a day later (nothing changed)',
            rows: f.rows,
            seconds: f.rerunSeconds,
            note: `PostgreSQL CPU ${f.rerunCpuSeconds ?? '?'} s against ${f.firstRunCpuSeconds ?? '?'} s for the first run`,
          },
          ...(['one', 'four'] as const).flatMap((n) => {
            const r = f.changedReruns[n];
            const what =
              n === 'one' ? 'one changed ledger entry' : 'four changes (claim moved to a duplicate)';
            return [
              { name: `reconcileRange, full re-run after ${what}`, rows: f.rows, seconds: r.fullSeconds },
              {
                name: `reconcileRange, re-run after ${what}: changed keys only`,
                rows: f.rows,
                seconds: r.incrementalSeconds,
                note:
                  `${r.ratio}x the full re-run${n === 'one' ? ' (target <= 0.05x)' : ''}; PostgreSQL CPU ` +
                  `${r.incrementalCpuSeconds ?? '?'} s against ${r.fullCpuSeconds ?? '?'} s; full run after it ${r.agree ? 'agrees' : 'DISAGREES'}; ${load}`,
              },
            ];
          }),
        ];
      },
    });
  }
}

// BENCH_STEPS=legacy,json,matching runs only the named sections (matched on the start of the name).
const only = process.env.BENCH_STEPS?.split(',').map((x) => x.trim().toLowerCase());
const selected = only
  ? steps.filter((s) => only.some((o) => s.name.toLowerCase().startsWith(o)))
  : steps.filter((s) => !s.onlyWhenNamed);
const results: BenchResult[] = [];
try {
  for (const step of selected) {
    log(`== ${step.name}`);
    results.push(...(await step.run(ctx)));
  }
} finally {
  await ctx.close();
  await stop();
  rmSync(workDir, { recursive: true, force: true });
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const lines = [
  `| step | rows | seconds | rows/s | peak RSS (MiB) | note |`,
  `|---|---:|---:|---:|---:|---|`,
  ...results.map(
    (r) =>
      `| ${r.name} | ${fmt(r.rows)} | ${r.seconds.toFixed(2)} | ${fmt(r.rows / r.seconds)} | ${r.peakRssMiB === undefined ? '' : r.peakRssMiB.toFixed(0)} | ${r.note ?? ''} |`,
  ),
];
// A section that prints tables of its own (growth) returns no rows: no empty table after them.
if (results.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
