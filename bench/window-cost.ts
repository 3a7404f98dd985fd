import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { round2 } from './figures.ts';
import { generateRows, insertBenchLoad, reconcileMonthByMonth } from './generate-rows.ts';
import { dropScratch, openBenchServer } from './scratch-databases.ts';
import { environmentSizes } from './script-options.ts';
import type { BenchStep } from './steps.ts';

/**
 * Window cost: does the nightly reconciliation of a 3-day window cost the same in a warehouse of
 * two years as in one that holds only those days? Two scratch databases get the same window rows
 * (`windowRows` provider transactions over 2026-03-10..12, with ledger and notifications); the large
 * one also holds `historyRows` more over the two years before, reconciled once month by month as
 * the nightly runs would have. Then the window is reconciled in each (first run and re-run), and
 * the times and their ratio are printed. Target: large / small ≤ 1.2.
 */
export interface WindowCostFigures {
  readonly windowRows: number;
  readonly historyRows: number;
  readonly smallSeconds: number;
  readonly largeSeconds: number;
  readonly smallRerunSeconds: number;
  readonly largeRerunSeconds: number;
  readonly ratio: number;
  readonly rerunRatio: number;
}

export const WINDOW = { from: '2026-03-10', to: '2026-03-12', now: '2026-03-20T12:00:00Z' };
export const WINDOW_START = '2026-03-10 04:00:00+00';
export const WINDOW_SECONDS = 3 * 86_400;
export const HISTORY_START = '2024-03-10 04:00:00+00';
export const HISTORY_SECONDS = 730 * 86_400;

async function timed(db: Kysely<Database>, now: string): Promise<number> {
  const t0 = performance.now();
  await reconcileRange(db, { from: WINDOW.from, to: WINDOW.to, now });
  return (performance.now() - t0) / 1000;
}

export async function benchWindowCost(
  options: { windowRows?: number; historyRows?: number; log?: (line: string) => void } = {},
): Promise<WindowCostFigures> {
  const windowRows = options.windowRows ?? 10_000;
  const historyRows = options.historyRows ?? 1_000_000;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = await openBenchServer();
  const names = ['small', 'large'].map((s) => `recon_bench_window_${s}_${process.pid}`);
  const dbs: Kysely<Database>[] = [];
  try {
    for (const name of names) {
      const { db } = await server.create(name);
      dbs.push(db);
      await insertBenchLoad(db);
    }
    const [small, large] = dbs as [Kysely<Database>, Kysely<Database>];
    const g0 = performance.now();
    // History first (numbers after the window's), so both databases hold the window rows under the same ids.
    await generateRows(large, windowRows + 1, historyRows, HISTORY_START, HISTORY_SECONDS, {
      duplicates: true,
    });
    for (const db of dbs) {
      await generateRows(db, 1, windowRows, WINDOW_START, WINDOW_SECONDS, { duplicates: true });
      await sql`vacuum analyze`.execute(db);
    }
    log(
      `window cost: generated ${windowRows.toLocaleString('en')} window rows, ${historyRows.toLocaleString('en')} history rows in ${((performance.now() - g0) / 1000).toFixed(1)} s`,
    );
    // The history as the nightly runs left it: claims and discrepancies of every past month.
    const h0 = performance.now();
    await reconcileMonthByMonth(large, { from: '2024-03-01', to: '2026-03-09', now: '2026-03-09T12:00:00Z' });
    await sql`vacuum analyze`.execute(large);
    log(`  history reconciled in ${((performance.now() - h0) / 1000).toFixed(1)} s`);

    const smallSeconds = await timed(small, WINDOW.now);
    const largeSeconds = await timed(large, WINDOW.now);
    const smallRerunSeconds = await timed(small, '2026-03-21T12:00:00Z');
    const largeRerunSeconds = await timed(large, '2026-03-21T12:00:00Z');
    const figures: WindowCostFigures = {
      windowRows,
      historyRows,
      smallSeconds: round2(smallSeconds),
      largeSeconds: round2(largeSeconds),
      smallRerunSeconds: round2(smallRerunSeconds),
      largeRerunSeconds: round2(largeRerunSeconds),
      ratio: round2(largeSeconds / smallSeconds),
      rerunRatio: round2(largeRerunSeconds / smallRerunSeconds),
    };
    log(
      `  reconcile ${WINDOW.from}..${WINDOW.to}: window only ${figures.smallSeconds} s, among ${historyRows.toLocaleString('en')} ${figures.largeSeconds} s, ratio ${figures.ratio} (target <= 1.2); ` +
        `re-run ${figures.smallRerunSeconds} s vs ${figures.largeRerunSeconds} s, ratio ${figures.rerunRatio}`,
    );
    return figures;
  } finally {
    for (const db of dbs) await db.destroy();
    await dropScratch(server, names, log);
  }
}

/** `npm run bench` section: BENCH_WINDOW_ROWS (default 10,000) among BENCH_HISTORY_ROWS (default 1,000,000). */
export const windowCostSteps: BenchStep[] = [
  {
    name: 'window-cost',
    async run(c) {
      const f = await benchWindowCost({
        ...environmentSizes({
          windowRows: ['BENCH_WINDOW_ROWS', 10_000],
          historyRows: ['BENCH_HISTORY_ROWS', 1_000_000],
        }),
        log: c.log,
      });
      return [
        {
          name: 'reconcile 3-day window, window-only warehouse',
          rows: f.windowRows,
          seconds: f.smallSeconds,
        },
        {
          name: 'reconcile 3-day window, among the history',
          rows: f.windowRows,
          seconds: f.largeSeconds,
          note: `${f.historyRows.toLocaleString('en')} history rows; ratio ${f.ratio} (target <= 1.2); re-run ratio ${f.rerunRatio}`,
        },
      ];
    },
  },
];

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  await benchWindowCost({
    ...(arg('--window-rows') ? { windowRows: arg('--window-rows')! } : {}),
    ...(arg('--history-rows') !== undefined ? { historyRows: arg('--history-rows')! } : {}),
  });
}
