import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { createDatabase } from '../db/database-on-client.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { generateRows, insertBenchLoad } from './generate-rows.ts';
import { type ChangedRerunFigures, measureChangedReruns } from './matching-changes.ts';
import { type MatchingFloor, measureMatchingFloor } from './matching-floor.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';
import { dropScratch, openBenchServer } from './scratch-databases.ts';

export interface MatchingFigures {
  readonly rows: number;
  readonly generateSeconds: number;
  /** First run: every match and discrepancy is new. */
  readonly firstRunSeconds: number;
  /** The floor of the first run over the same rows, measured just before it (bench/matching-floor.ts). */
  readonly floor: MatchingFloor;
  /** firstRunSeconds / floor.seconds: issue 30's target is 1.5 at most. */
  readonly firstRunOverFloor: number;
  /** PostgreSQL CPU seconds of the floor, when readable (see firstRunCpuSeconds). */
  readonly floorCpuSeconds: number | null;
  /**
   * Second run over the same data, a day later: nothing changed, so it looks at no key
   * (reconcile/incremental.ts).
   */
  readonly rerunSeconds: number;
  /** After one ledger entry's amount changed: the run over that key (changedReruns.one). */
  readonly changedRerunSeconds: number;
  /** Runs over changed keys against full runs after the same changes (bench/matching-changes.ts). */
  readonly changedReruns: ChangedRerunFigures;
  /**
   * CPU seconds the PostgreSQL backends spent on each run, when readable (Linux, local server): on a
   * machine shared with other work the wall time grows with the load, this much less.
   */
  readonly firstRunCpuSeconds: number | null;
  readonly rerunCpuSeconds: number | null;
  readonly discrepancies: number;
  readonly discrepanciesByKind: Record<string, number>;
  /** Peak resident memory of this Node process, MiB (the matching itself runs in PostgreSQL). */
  readonly nodePeakRssMiB: number;
  /** Peak resident memory of the PostgreSQL backend that ran the matching, MiB, when readable (Linux, local server). */
  readonly postgresPeakRssMiB: number | null;
}

/**
 * Matching benchmark: `rows` provider transactions (30 Eastern days) against as many ledger entries
 * and notifications, generated in SQL in a scratch database on DATABASE_URL's server (or the embedded
 * one), then reconcileRange over the month, twice. Prints and returns the figures; drops the scratch
 * database. About 1.5% of rows disagree, in six kinds. `unlogged` (`--unlogged`) makes the match
 * tables UNLOGGED first, to measure what logging them costs.
 */
export async function benchMatching(
  options: { rows?: number; log?: (line: string) => void; unlogged?: boolean } = {},
): Promise<MatchingFigures> {
  const rows = options.rows ?? 1_000_000;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = await openBenchServer();
  const scratch = process.env.RECON_BENCH_DB ?? `recon_bench_matching_${process.pid}`;
  const { db } = await server.create(scratch);
  try {
    // --unlogged: the match tables as they were before they were made crash-safe, for comparison.
    if (options.unlogged) {
      for (const t of ['transaction_matches', 'return_matches', 'notification_matches', 'source_matches'])
        await sql`alter table ${sql.table(t)} set unlogged`.execute(db);
      log('matching bench: match tables UNLOGGED (comparison only; the schema keeps them logged)');
    }
    log(
      `matching bench: generating ${rows.toLocaleString('en')} provider transactions, ledger entries and notifications`,
    );
    const g0 = performance.now();
    await insertBenchLoad(db);
    // 30 days from 2026-03-01 00:00 Eastern; about 1.5% of rows disagree.
    await generateRows(db, 1, rows, '2026-03-01 05:00:00+00', 30 * 86_400, { ledgerOnly: true });
    await sql`analyze`.execute(db);
    const generateSeconds = (performance.now() - g0) / 1000;
    log(`  generated in ${generateSeconds.toFixed(1)} s`);

    const floorCpu0 = await pgBackendCpuSeconds(db);
    const floor = await measureMatchingFloor(db, { from: '2026-03-01', to: '2026-03-31' });
    const floorCpu = await pgBackendCpuSeconds(db);
    log(
      `  floor: join ${floor.joinSeconds.toFixed(2)} s + sorted claim inserts ${floor.claimsSeconds.toFixed(2)} s = ${floor.seconds.toFixed(2)} s` +
        ` (PostgreSQL CPU ${floorCpu0 === null || floorCpu === null ? '?' : (floorCpu - floorCpu0).toFixed(1)} s)`,
    );
    const backendPid = await pgBackendPeak(db);
    const cpu0 = await pgBackendCpuSeconds(db);
    const t1 = performance.now();
    const first = await reconcileRange(db, {
      from: '2026-03-01',
      to: '2026-03-31',
      now: '2026-05-01T12:00:00Z',
    });
    const firstRunSeconds = (performance.now() - t1) / 1000;
    const cpu1 = await pgBackendCpuSeconds(db);
    const t2 = performance.now();
    await reconcileRange(db, { from: '2026-03-01', to: '2026-03-31', now: '2026-05-02T12:00:00Z' });
    const rerunSeconds = (performance.now() - t2) / 1000;
    const cpu2 = await pgBackendCpuSeconds(db);
    const changedReruns = await measureChangedReruns(db, 3);
    const cpuDelta = (a: number | null, b: number | null) =>
      a === null || b === null ? null : round1(b - a);
    const postgresPeakRssMiB = await backendPid();
    const figures: MatchingFigures = {
      rows,
      generateSeconds: round1(generateSeconds),
      firstRunSeconds: round1(firstRunSeconds),
      floor,
      firstRunOverFloor: Math.round((firstRunSeconds / floor.seconds) * 100) / 100,
      floorCpuSeconds: floorCpu0 === null || floorCpu === null ? null : round1(floorCpu - floorCpu0),
      rerunSeconds: round1(rerunSeconds),
      changedRerunSeconds: changedReruns.one.incrementalSeconds,
      changedReruns,
      firstRunCpuSeconds: cpuDelta(cpu0, cpu1),
      rerunCpuSeconds: cpuDelta(cpu1, cpu2),
      discrepancies: first.totalDiscrepancies,
      // Counts per kind, all currencies together: a count of problems is not an amount of money.
      discrepanciesByKind: first.discrepancies.reduce<Record<string, number>>(
        (byKind, d) => ({ ...byKind, [d.kind]: (byKind[d.kind] ?? 0) + d.count }),
        {},
      ),
      nodePeakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      postgresPeakRssMiB,
    };
    log(
      `  reconcileRange over 31 days: first run ${figures.firstRunSeconds} s (${figures.firstRunOverFloor}x the floor), re-run ${figures.rerunSeconds} s, ` +
        `re-run after one changed ledger entry ${changedReruns.one.incrementalSeconds} s (full ${changedReruns.one.fullSeconds} s, ` +
        `${changedReruns.one.ratio}x; PostgreSQL CPU ${changedReruns.one.incrementalCpuSeconds ?? '?'} s against ${changedReruns.one.fullCpuSeconds ?? '?'} s), ` +
        `after four changes ${changedReruns.four.incrementalSeconds} s (full ${changedReruns.four.fullSeconds} s, ` +
        `${changedReruns.four.ratio}x; PostgreSQL CPU ${changedReruns.four.incrementalCpuSeconds ?? '?'} s against ${changedReruns.four.fullCpuSeconds ?? '?'} s), ` +
        `full runs after them agree: ${changedReruns.one.agree && changedReruns.four.agree} ` +
        `(PostgreSQL CPU ${figures.firstRunCpuSeconds ?? '?'} s, ${figures.rerunCpuSeconds ?? '?'} s; load ${loadavg()[0]!.toFixed(1)}); ` +
        `${figures.discrepancies} discrepancies; peak RSS node ${figures.nodePeakRssMiB} MiB, postgres backend ${figures.postgresPeakRssMiB ?? '?'} MiB`,
    );
    log(`  by kind: ${JSON.stringify(figures.discrepanciesByKind)}`);
    return figures;
  } finally {
    await db.destroy();
    await dropScratch(server, [scratch], log);
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/**
 * The pool has two connections and reconcileRange uses one transaction: each backend's VmHWM (peak
 * resident set) is read from /proc after the runs, when the server is local. Returns the largest.
 */
async function pgBackendPeak(db: ReturnType<typeof createDatabase>): Promise<() => Promise<number | null>> {
  return async () => {
    const pids = await sql<{
      pid: number;
    }>`select pid from pg_stat_activity where datname = current_database()`.execute(db);
    let peak: number | null = null;
    for (const { pid } of pids.rows) {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak ?? 0, Math.round(Number(m[1]) / 1024));
      } catch {
        // not a local server, or not readable: the figure is omitted
      }
    }
    return peak;
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = process.argv.indexOf('--rows');
  await benchMatching({
    ...(arg > 0 ? { rows: Number(process.argv[arg + 1]) } : {}),
    unlogged: process.argv.includes('--unlogged'),
  });
}
