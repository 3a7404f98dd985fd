import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Database } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { type Config, loadConfig } from '../config/config.ts';
import { SOURCES } from '../domain/records.ts';
import { addDays } from '../domain/time/calendar.ts';
import { pullSource } from '../ingest/pull-source.ts';
import { createProviderClient, type ProviderClient } from '../provider/client/index.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { loadMerchantSide } from '../sandbox/load-merchant-side.ts';
import { deriveMerchantView, type MerchantView } from '../sandbox/merchant-view.ts';
import { type Sandbox, startSandbox } from '../sandbox/server.ts';
import { generateRows, insertBenchLoad, reconcileMonthByMonth } from './generate-rows.ts';
import { type BenchServer, openBenchServer } from './scratch-databases.ts';
import type { BenchStep } from './steps.ts';

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

export interface NightTimes {
  readonly pullSeconds: number;
  readonly reconcileSeconds: number;
  readonly totalSeconds: number;
}

/** The scheduled Eastern day of the timed night, its 3-day look-back, and the instant it runs at. */
export const NIGHT = { day: '2026-03-12', lookbackDays: 3, now: '2026-03-13T06:30:00Z' };
/** The sandbox serves these days at `dayRows` transactions a day: the night's window and the night before's. */
export const SANDBOX_DAYS = { from: addDays(NIGHT.day, -NIGHT.lookbackDays), to: NIGHT.day };
/** The history ends where the sandbox's days begin: two years of 730 days (Eastern midnight, EST). */
const HISTORY_START = '2024-03-08 05:00:00+00';
const HISTORY_SECONDS = 730 * 86_400;
const HISTORY_CHUNKS = 24;

interface Night {
  readonly from: string;
  readonly to: string;
  readonly now: string;
}

export function nightOf(day: string, now: string): Night {
  return { from: addDays(day, 1 - NIGHT.lookbackDays), to: day, now };
}

interface NightlyOptions {
  historyRows?: number;
  dayRows?: number;
  keep?: boolean;
  reuse?: boolean;
  /** Nights measured on each warehouse (fresh copies); the medians are compared. */
  repeat?: number;
  /** Measure one warehouse only (for RECON_PROFILE=explain: one warehouse's plans); no ratio then. */
  only?: 'empty' | 'large';
  log?: (line: string) => void;
}

/** What a night pulls from: the sandbox, and the client and config that reach it. */
interface Provider {
  readonly sandbox: Sandbox;
  readonly client: ProviderClient;
  readonly config: Config;
}

/** The prepared warehouses (templates), each night measured on a fresh copy of one. */
type Templates = Record<'empty' | 'large', string>;

export async function benchNightly(options: NightlyOptions = {}): Promise<NightlyFigures> {
  const historyRows = options.historyRows ?? 10_000_000;
  const dayRows = options.dayRows ?? 15_000;
  const repeat = options.repeat ?? 3;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const view = deriveMerchantView({
    seed: 'nightly',
    transactions: dayRows * (NIGHT.lookbackDays + 1),
    ...SANDBOX_DAYS,
  });
  const sandbox = await startSandbox({ history: view.history });
  const config = loadConfig({ ...sandbox.env(), RECON_ENVIRONMENT: 'staging' });
  const client = createProviderClient(config, { env: {} });
  const provider: Provider = { sandbox, client, config };
  const server = await openBenchServer();
  const tag = `${historyRows}_${dayRows}`;
  const templates = { empty: `recon_bench_nightly_empty_${tag}`, large: `recon_bench_nightly_large_${tag}` };
  try {
    for (const [which, name] of Object.entries(templates)) {
      if (options.reuse && (await server.exists(name))) await reusePrepared(server, which, name, log);
      else await prepare(server, name, which === 'large' ? historyRows : 0, view, provider, log);
    }
    const { measured, rowsPulled } = await measureNights(
      server,
      templates,
      provider,
      repeat,
      options.only,
      log,
    );
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
  } finally {
    if (!options.keep) for (const name of Object.values(templates)) await server.drop(name);
    else log(`  kept ${Object.values(templates).join(', ')} (next run: --reuse)`);
    await server.close();
    await client.close();
    await sandbox.close();
  }
}

/** One night, as workflows/window-workflow.ts runs it: every source at once, then the reconcile of the window. */
async function runNight(
  { sandbox, client, config }: Provider,
  handle: DatabaseHandle,
  night: Night,
): Promise<NightTimes & { rows: number }> {
  sandbox.setAsOf(night.now);
  const t0 = performance.now();
  const loads = await Promise.all(
    SOURCES.map((source) =>
      pullSource({ handle, client, config }, { source, from: night.from, to: night.to, origin: 'workflow' }),
    ),
  );
  const t1 = performance.now();
  await reconcileRange(handle.db, night);
  const t2 = performance.now();
  return {
    pullSeconds: round2((t1 - t0) / 1000),
    reconcileSeconds: round2((t2 - t1) / 1000),
    totalSeconds: round2((t2 - t0) / 1000),
    rows: loads.reduce((n, l) => n + l.rowsRead, 0),
  };
}

/**
 * A warehouse prepared by an earlier version: brought to this version's schema first, as `recon
 * migrate` would bring a warehouse (the copies are made from it as it is).
 */
async function reusePrepared(server: BenchServer, which: string, name: string, log: (line: string) => void) {
  log(`nightly bench: reusing the prepared ${which} warehouse ${name} (migrating it to the latest schema)`);
  const prepared = server.open(name, 1);
  try {
    await migrateToLatest(prepared.db);
  } finally {
    await prepared.close();
  }
}

/**
 * Each measurement runs the night on a fresh copy of the prepared warehouse (the night changes it);
 * empty and large alternate, `repeat` nights of each (of `only`, when given).
 */
async function measureNights(
  server: BenchServer,
  templates: Templates,
  provider: Provider,
  repeat: number,
  only: 'empty' | 'large' | undefined,
  log: (line: string) => void,
): Promise<{ measured: Record<'empty' | 'large', NightTimes[]>; rowsPulled: number }> {
  const measured: Record<'empty' | 'large', NightTimes[]> = { empty: [], large: [] };
  let rowsPulled = 0;
  for (let r = 0; r < repeat; r++) {
    for (const which of only ? [only] : (['empty', 'large'] as const)) {
      const copy = `${templates[which]}_run_${process.pid}`;
      const handle = await server.create(copy, { template: templates[which], poolSize: 12 });
      try {
        await sql`vacuum analyze`.execute(handle.db);
        const load = loadavg()[0]!.toFixed(1);
        const times = await runNight(provider, handle, nightOf(NIGHT.day, NIGHT.now));
        measured[which].push(times);
        rowsPulled = times.rows;
        log(
          `  night of ${NIGHT.day}, ${which} warehouse: pull and load ${times.pullSeconds} s (${times.rows.toLocaleString('en')} rows), reconcile ${times.reconcileSeconds} s, total ${times.totalSeconds} s (load average ${load})`,
        );
      } finally {
        await handle.close();
        await server.drop(copy);
      }
    }
  }
  return { measured, rowsPulled };
}

/**
 * A warehouse as the nights before {@link NIGHT} left it: the merchant side (ledger, notification
 * history) of the sandbox's days, `historyRows` of reconciled history before them, and the night
 * before's pull and reconcile.
 */
async function prepare(
  server: BenchServer,
  name: string,
  historyRows: number,
  view: MerchantView,
  provider: Provider,
  log: (line: string) => void,
): Promise<void> {
  const p0 = performance.now();
  const elapsed = () => `${((performance.now() - p0) / 1000).toFixed(0)} s`;
  const handle = await server.create(name, { poolSize: 12 });
  try {
    if (historyRows > 0) {
      await insertBenchLoad(handle.db);
      await generateHistory(handle.db, historyRows, (done) =>
        log(
          `  ${name}: generated ${done.toLocaleString('en')} of ${historyRows.toLocaleString('en')} (${elapsed()})`,
        ),
      );
      await sql`vacuum analyze`.execute(handle.db);
      await reconcileMonthByMonth(
        handle.db,
        { from: '2024-03-01', to: addDays(SANDBOX_DAYS.from, -1), now: `${SANDBOX_DAYS.from}T06:30:00Z` },
        (month) => log(`  ${name}: reconciled ${month} (${elapsed()})`),
      );
    }
    await loadMerchantSide(handle, view, 'staging');
    // The night before: its pulls leave the look-back days loaded, as they are when the timed night comes.
    await runNight(provider, handle, nightOf(addDays(NIGHT.day, -1), `${NIGHT.day}T06:30:00Z`));
    await sql`vacuum analyze`.execute(handle.db);
    log(`  ${name}: prepared in ${elapsed()}`);
  } finally {
    await handle.close();
  }
}

/** Provider transactions with their ledger and notifications, over the two years, in chunks. */
export async function generateHistory(
  db: Kysely<Database>,
  rows: number,
  progress: (done: number) => void,
): Promise<void> {
  const chunk = Math.ceil(rows / HISTORY_CHUNKS);
  for (let k = 0, first = 1; first <= rows; k++, first += chunk) {
    const count = Math.min(chunk, rows - first + 1);
    const start = new Date(Date.parse(HISTORY_START) + (k * HISTORY_SECONDS * 1000) / HISTORY_CHUNKS);
    await generateRows(db, first, count, start.toISOString(), HISTORY_SECONDS / HISTORY_CHUNKS, {
      duplicates: true,
    });
    progress(first + count - 1);
  }
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

/** Per field, the median of the nights (the middle one, or the mean of the two middle ones). */
function median(nights: readonly NightTimes[]): NightTimes {
  const mid = (f: (t: NightTimes) => number) => {
    const v = nights.map(f).sort((a, b) => a - b);
    const m = Math.floor(v.length / 2);
    return round2(v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2);
  };
  return {
    pullSeconds: mid((t) => t.pullSeconds),
    reconcileSeconds: mid((t) => t.reconcileSeconds),
    totalSeconds: mid((t) => t.totalSeconds),
  };
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** `npm run bench` section: BENCH_NIGHTLY_HISTORY_ROWS (default 10,000,000), BENCH_NIGHTLY_DAY_ROWS (15,000). */
export const nightlySteps: BenchStep[] = [
  {
    name: 'nightly',
    async run(c) {
      const f = await benchNightly({
        historyRows: Number(process.env.BENCH_NIGHTLY_HISTORY_ROWS ?? 10_000_000),
        dayRows: Number(process.env.BENCH_NIGHTLY_DAY_ROWS ?? 15_000),
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  await benchNightly({
    ...(arg('--history-rows') !== undefined ? { historyRows: arg('--history-rows')! } : {}),
    ...(arg('--day-rows') !== undefined ? { dayRows: arg('--day-rows')! } : {}),
    keep: process.argv.includes('--keep'),
    reuse: process.argv.includes('--reuse'),
    ...(arg('--repeat') !== undefined ? { repeat: arg('--repeat')! } : {}),
    ...(process.argv.includes('--only')
      ? { only: process.argv[process.argv.indexOf('--only') + 1] === 'empty' ? 'empty' : 'large' }
      : {}),
  });
}
