import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Database } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { loadConfig } from '../config/config.ts';
import { SOURCES } from '../domain/records.ts';
import { addDays } from '../domain/time/calendar.ts';
import { pullSource } from '../ingest/pull-source.ts';
import { createProviderClient } from '../provider/client/index.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { insertFeeSchedule, loadMerchantSide } from '../sandbox/load-merchant-side.ts';
import { deriveMerchantView, type MerchantView } from '../sandbox/merchant-view.ts';
import { startSandbox } from '../sandbox/server.ts';
import { median, round2 } from './figures.ts';
import { generateRows, insertBenchLoad, reconcileMonthByMonth } from './generate-rows.ts';
import { type BenchServer, openBenchServer } from './scratch-databases.ts';

/**
 * What the nightly benchmarks share (bench/nightly.ts, bench/nightly-follow-up.ts): the timed night,
 * the sandbox that serves its days, the warehouse as the nights before left it, and the night itself
 * as workflows/window-workflow.ts runs it, without Temporal.
 */

/** The scheduled Eastern day of the timed night, its 3-day look-back, and the instant it runs at. */
export const NIGHT = { day: '2026-03-12', lookbackDays: 3, now: '2026-03-13T06:30:00Z' };
/** The sandbox serves these days at `dayRows` transactions a day: the night's window and the night before's. */
export const SANDBOX_DAYS = { from: addDays(NIGHT.day, -NIGHT.lookbackDays), to: NIGHT.day };
/** The history ends where the sandbox's days begin: two years of 730 days (Eastern midnight, EST). */
const HISTORY_START = '2024-03-08 05:00:00+00';
const HISTORY_SECONDS = 730 * 86_400;
const HISTORY_CHUNKS = 24;

export interface Night {
  readonly from: string;
  readonly to: string;
  readonly now: string;
}

export interface NightTimes {
  readonly pullSeconds: number;
  readonly reconcileSeconds: number;
  readonly totalSeconds: number;
}

/** A night's times and the rows its pulls read from the provider (all sources, look-back included). */
export interface NightRun extends NightTimes {
  readonly rows: number;
}

/** What a nightly bench takes: its sizes, how often the night is measured, its prepared warehouses. */
export interface NightBenchOptions {
  historyRows?: number;
  dayRows?: number;
  /** Nights measured on each warehouse (fresh copies); the medians are compared. */
  repeat?: number;
  /** Keep the prepared warehouses as templates; `reuse` copies them instead of preparing again. */
  keep?: boolean;
  reuse?: boolean;
  log?: (line: string) => void;
}

/** The options in force: 15,000 rows a day, 3 nights, progress on stdout, unless given; the history the bench's own. */
function withNightDefaults(options: NightBenchOptions, historyRows: number) {
  return {
    historyRows: options.historyRows ?? historyRows,
    dayRows: options.dayRows ?? 15_000,
    repeat: options.repeat ?? 3,
    log: options.log ?? ((line: string) => process.stdout.write(`${line}\n`)),
  };
}

/** A night bench's options in force, and its prepared templates' names. */
export interface NightSettings<K extends string> extends ReturnType<typeof withNightDefaults> {
  readonly templates: Readonly<Record<K, string>>;
}

/**
 * Starts a night bench, runs `measure` on it with the options in force (`historyRows` unless given)
 * and the templates' names (each of `names` tagged with the history and day rows), then drops the
 * templates (or keeps them with `keep`, for a later `--reuse`) and stops the bench, however
 * `measure` ends.
 */
export async function onNightBench<K extends string, T>(
  options: NightBenchOptions,
  historyRows: number,
  names: Readonly<Record<K, string>>,
  measure: (bench: NightBench, night: NightSettings<K>) => Promise<T>,
): Promise<T> {
  const settings = withNightDefaults(options, historyRows);
  const tag = `${settings.historyRows}_${settings.dayRows}`;
  const templates = Object.fromEntries(
    Object.entries<string>(names).map(([key, name]) => [key, `${name}_${tag}`]),
  ) as Record<K, string>;
  const bench = await startNightBench(settings.dayRows);
  try {
    return await measure(bench, { ...settings, templates });
  } finally {
    if (!options.keep) for (const name of Object.values<string>(templates)) await bench.server.drop(name);
    else settings.log(`  kept ${Object.values(templates).join(', ')} (next run: --reuse)`);
    await bench.close();
  }
}

export function nightOf(day: string, now: string): Night {
  return { from: addDays(day, 1 - NIGHT.lookbackDays), to: day, now };
}

export { median, round2 };

/** The sandbox serving the night's days, a client of it, the bench's server, and the night to run. */
export interface NightBench {
  readonly view: MerchantView;
  readonly server: BenchServer;
  readonly client: ReturnType<typeof createProviderClient>;
  /** Every source pulled at once for the night's days, then the window reconciled. */
  runNight(handle: DatabaseHandle, night: Night): Promise<NightRun>;
  close(): Promise<void>;
}

export async function startNightBench(dayRows: number): Promise<NightBench> {
  const view = deriveMerchantView({
    seed: 'nightly',
    transactions: dayRows * (NIGHT.lookbackDays + 1),
    ...SANDBOX_DAYS,
  });
  const sandbox = await startSandbox({ history: view.history });
  const config = loadConfig({ ...sandbox.env(), RECON_ENVIRONMENT: 'staging' });
  const client = createProviderClient(config, { env: {} });
  const server = await openBenchServer();
  return {
    view,
    server,
    client,
    async runNight(handle, night) {
      sandbox.setAsOf(night.now);
      const t0 = performance.now();
      // As workflows/window-workflow.ts: every source at once, then the reconcile of the window.
      const loads = await Promise.all(
        SOURCES.map((source) =>
          pullSource(
            { handle, client, config },
            { source, from: night.from, to: night.to, origin: 'workflow' },
          ),
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
    },
    async close() {
      await server.close();
      await client.close();
      await sandbox.close();
    },
  };
}

/**
 * A warehouse as the nights before {@link NIGHT} left it, created as `name`: the merchant side (ledger,
 * notification history) of the sandbox's days, `historyRows` of reconciled history before them
 * (`beforeReconcile` changes the history first: the follow-up bench makes some of it non-final), and
 * the night before's pull and reconcile.
 */
export async function prepareWarehouse(
  bench: NightBench,
  name: string,
  options: {
    historyRows: number;
    beforeReconcile?: (db: Kysely<Database>) => Promise<void>;
    /** Take `name` as an earlier run prepared it (`--keep`), brought to this version's schema. */
    reuse?: boolean;
    log: (line: string) => void;
  },
): Promise<void> {
  const { historyRows, log } = options;
  if (options.reuse && (await bench.server.exists(name))) {
    // Prepared by an earlier version: migrated first, as `recon migrate` would bring a warehouse.
    log(`  reusing the prepared warehouse ${name} (migrating it to the latest schema)`);
    const prepared = bench.server.open(name, 1);
    try {
      await migrateToLatest(prepared.db);
    } finally {
      await prepared.close();
    }
    return;
  }
  const p0 = performance.now();
  const elapsed = () => `${((performance.now() - p0) / 1000).toFixed(0)} s`;
  const handle = await bench.server.create(name, { poolSize: 12 });
  try {
    // The contract begins with the sandbox's days: the history was generated without one, and a
    // contract valid from before it would make a later run over a history day (the follow-up's) find
    // a fee mismatch in every transaction, which no night before had found. It is written before the
    // history is reconciled, as a warehouse's contract is in place before its nights: written after,
    // it is a change no key tells (reconcile/incremental.ts), and every later run over a history day
    // (the follow-up's) would match the whole of its range instead of the keys the night changed.
    await insertFeeSchedule(
      handle.db,
      bench.view.feeSchedule.map((f) => ({ ...f, validFrom: SANDBOX_DAYS.from })),
    );
    if (historyRows > 0) {
      await insertBenchLoad(handle.db);
      await generateHistory(handle.db, historyRows, (done) =>
        log(
          `  ${name}: generated ${done.toLocaleString('en')} of ${historyRows.toLocaleString('en')} (${elapsed()})`,
        ),
      );
      await options.beforeReconcile?.(handle.db);
      await sql`vacuum analyze`.execute(handle.db);
      await reconcileMonthByMonth(
        handle.db,
        { from: '2024-03-01', to: addDays(SANDBOX_DAYS.from, -1), now: `${SANDBOX_DAYS.from}T06:30:00Z` },
        (month) => log(`  ${name}: reconciled ${month} (${elapsed()})`),
      );
    }
    await loadMerchantSide(handle, bench.view, 'staging', { feeSchedule: false });
    // The night before: its pulls leave the look-back days loaded, as they are when the timed night comes.
    await bench.runNight(handle, nightOf(addDays(NIGHT.day, -1), `${NIGHT.day}T06:30:00Z`));
    await sql`vacuum analyze`.execute(handle.db);
    log(`  ${name}: prepared in ${elapsed()}`);
  } finally {
    await handle.close();
  }
}

/**
 * Runs `measure` on a fresh copy of the prepared warehouse `template` (a night changes it), vacuumed
 * and analysed as the prepared one was; the copy is dropped after.
 */
export async function onFreshCopy<T>(
  server: BenchServer,
  template: string,
  measure: (handle: DatabaseHandle) => Promise<T>,
): Promise<T> {
  const copy = `${template}_run_${process.pid}`;
  const handle = await server.create(copy, { template, poolSize: 12 });
  try {
    await sql`vacuum analyze`.execute(handle.db);
    return await measure(handle);
  } finally {
    await handle.close();
    await server.drop(copy);
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
