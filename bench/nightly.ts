import { loadavg } from 'node:os';
import {
  median as medianOf,
  NIGHT,
  nightOf,
  type NightBenchOptions,
  type NightTimes,
  onFreshCopy,
  onNightBench,
  prepareWarehouse,
  round2,
} from './night-setup.ts';
import { environmentSizes, numberFlags, runAsScript } from './script-options.ts';
import type { BenchStep } from './steps.ts';

export { generateHistory, NIGHT, nightOf, round2, SANDBOX_DAYS } from './night-setup.ts';
export type { NightTimes } from './night-setup.ts';

/**
 * The nightly job in year three against the same job on day one (issue 13, section 1). Two warehouses
 * hold the same recent days, as the previous nights left them; the large one also holds
 * `historyRows` provider transactions (with their ledger entries and notifications) over the two
 * years before, reconciled month by month as the nightly runs would have. Then the night of
 * {@link NIGHT} runs in each, as the window workflow runs it: every source pulled from the sandbox
 * over HTTP, concurrently, for the scheduled day and its look-back (streamed into the loader), then
 * the window reconciled. Target: large / empty ≤ 1.2.
 *
 * The prepared warehouses are kept as templates (`--keep`); a later run with `--reuse` copies them
 * instead of preparing again (preparing 10,000,000 rows takes a quarter of an hour), so that the
 * measured night can be repeated, or run under RECON_PROFILE=explain for every statement's plan.
 */
export interface NightlyFigures {
  readonly historyRows: number;
  readonly dayRows: number;
  /** Rows the timed night's pulls read from the provider (all sources, look-back included). */
  readonly rowsPulled: number;
  readonly empty: NightTimes;
  readonly large: NightTimes;
  readonly ratio: number;
  /** Every measured night's times, in the order run (the medians above are taken over these). */
  readonly nights: Record<'empty' | 'large', readonly NightTimes[]>;
}

export async function benchNightly(
  options: NightBenchOptions & {
    /** Measure one warehouse only (for RECON_PROFILE=explain: one warehouse's plans); no ratio then. */
    only?: 'empty' | 'large';
  } = {},
): Promise<NightlyFigures> {
  const names = { empty: 'recon_bench_nightly_empty', large: 'recon_bench_nightly_large' };
  return onNightBench(options, 10_000_000, names, async (bench, settings) => {
    const { historyRows, dayRows, repeat, log, templates } = settings;
    for (const [which, name] of Object.entries(templates)) {
      await prepareWarehouse(bench, name, {
        historyRows: which === 'large' ? historyRows : 0,
        reuse: options.reuse === true,
        log,
      });
    }
    // Each measurement runs the night on a fresh copy of the prepared warehouse (the night changes
    // it); empty and large alternate, and the median of `repeat` nights of each is compared.
    const measured: Record<'empty' | 'large', NightTimes[]> = { empty: [], large: [] };
    let rowsPulled = 0;
    for (let r = 0; r < repeat; r++) {
      for (const which of options.only ? [options.only] : (['empty', 'large'] as const)) {
        const times = await onFreshCopy(bench.server, templates[which], async (handle) => {
          const load = loadavg()[0]!.toFixed(1);
          const t = await bench.runNight(handle, nightOf(NIGHT.day, NIGHT.now));
          log(
            `  night of ${NIGHT.day}, ${which} warehouse: pull and load ${t.pullSeconds} s (${t.rows.toLocaleString('en')} rows), reconcile ${t.reconcileSeconds} s, total ${t.totalSeconds} s (load average ${load})`,
          );
          return t;
        });
        measured[which].push({
          pullSeconds: times.pullSeconds,
          reconcileSeconds: times.reconcileSeconds,
          totalSeconds: times.totalSeconds,
        });
        rowsPulled = times.rows;
      }
    }
    if (options.only)
      return { historyRows, dayRows, rowsPulled, ...measuredOnly(measured), nights: measured };
    const empty = median(measured.empty);
    const large = median(measured.large);
    const figures = {
      historyRows,
      dayRows,
      rowsPulled,
      empty,
      large,
      ratio: round2(large.totalSeconds / empty.totalSeconds),
      nights: measured,
    };
    log(
      `  nightly job (median of ${repeat}) among ${historyRows.toLocaleString('en')} history rows / on an empty warehouse: ${large.totalSeconds} s / ${empty.totalSeconds} s, ratio ${figures.ratio} (target <= 1.2); ` +
        `pull ${round2(large.pullSeconds / empty.pullSeconds)}, reconcile ${round2(large.reconcileSeconds / empty.reconcileSeconds)}`,
    );
    return figures;
  });
}

/** The figures of a run that measured one warehouse: the other's are zero, and so is the ratio. */
function measuredOnly(measured: Record<'empty' | 'large', NightTimes[]>) {
  const none = { pullSeconds: 0, reconcileSeconds: 0, totalSeconds: 0 };
  return {
    empty: measured.empty.length > 0 ? median(measured.empty) : none,
    large: measured.large.length > 0 ? median(measured.large) : none,
    ratio: 0,
  };
}

/** Per field, the median of the nights. */
function median(nights: readonly NightTimes[]): NightTimes {
  const mid = (f: (t: NightTimes) => number) => medianOf(nights.map(f));
  return {
    pullSeconds: mid((t) => t.pullSeconds),
    reconcileSeconds: mid((t) => t.reconcileSeconds),
    totalSeconds: mid((t) => t.totalSeconds),
  };
}

/** `npm run bench` section: BENCH_NIGHTLY_HISTORY_ROWS (default 10,000,000), BENCH_NIGHTLY_DAY_ROWS (15,000). */
export const nightlySteps: BenchStep[] = [
  {
    name: 'nightly',
    async run(c) {
      const f = await benchNightly({
        ...environmentSizes({
          historyRows: ['BENCH_NIGHTLY_HISTORY_ROWS', 10_000_000],
          dayRows: ['BENCH_NIGHTLY_DAY_ROWS', 15_000],
        }),
        reuse: process.env.BENCH_NIGHTLY_REUSE === '1',
        keep: process.env.BENCH_NIGHTLY_REUSE === '1',
        log: c.log,
      });
      return [
        { name: 'nightly job, empty warehouse', rows: f.rowsPulled, seconds: f.empty.totalSeconds },
        {
          name: 'nightly job, among the history',
          rows: f.rowsPulled,
          seconds: f.large.totalSeconds,
          note: `${f.historyRows.toLocaleString('en')} history rows; ratio ${f.ratio} (target <= 1.2)`,
        },
      ];
    },
  },
];

if (runAsScript(import.meta.url)) {
  await benchNightly({
    ...numberFlags({ historyRows: '--history-rows', dayRows: '--day-rows', repeat: '--repeat' }),
    keep: process.argv.includes('--keep'),
    reuse: process.argv.includes('--reuse'),
    ...(process.argv.includes('--only')
      ? { only: process.argv[process.argv.indexOf('--only') + 1] === 'empty' ? 'empty' : 'large' }
      : {}),
  });
}
