import { loadavg } from 'node:os';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { addDays } from '../domain/time/calendar.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';
import { rangesOfDates } from '../workflows/windows.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';
import { median, round2 } from './figures.ts';
import { generateRows, insertBenchLoad, reconcileMonthByMonth } from './generate-rows.ts';
import { claimsDigest, nothingChanged } from './matching-changes.ts';
import { type BenchServer, dropScratch, openBenchServer } from './scratch-databases.ts';
import { numberFlags, runAsScript } from './script-options.ts';
import type { BenchStep } from './steps.ts';

/**
 * The nightly's reconcile against the history's size (issue 30, section 1's second target: its cost
 * follows the day's changes, not the range it covers). For each history size, a warehouse of that
 * many provider transactions over two years (with their ledger entries and notifications, bench/
 * generate-rows.ts) is reconciled month by month, as the nightly runs would have left it (a template
 * database, kept with `keep`). Then, round by round, the sizes alternated (100,000, 1,000,000,
 * 100,000, ...: both sizes see the same state of the machine, where one size's rounds after the
 * other's saw different loads), each round on a fresh copy of its size's template whose days are
 * first matched in full (not timed: every round starts from the same state, its caches warm), THE
 * SAME changed rows are written on the last `days` days: per day, `perDay` provider transactions
 * change status, `perDay` ledger entries change amount, `perDay` notifications arrive and `perDay`
 * returns are reported, each on rows of its own (one of BLOCKS blocks of rows, in turn). The days
 * are reconciled again as the follow-up does (reconcile/reconcile-range.ts over rangesOfDates, at
 * the history's own `now`, so that no date's due state moves: the run looks at the changed keys
 * only) and timed: wall and the server's CPU seconds. A full run of the same ranges follows and must
 * change nothing (it is not timed). The headline: the largest size's median over the smallest's,
 * wall and server CPU (as before rounds were alternated). Target: about 1x (the lead's reading: at
 * most 1.2x).
 */
export interface NightlyChangesFigures {
  readonly days: number;
  readonly perDay: number;
  readonly sizes: readonly SizeFigures[];
  /** The largest size's median over the smallest's: wall and server CPU. */
  readonly wallRatio: number;
  readonly cpuRatio: number | null;
  /** The median of the rounds' own ratios (round r of the largest over round r of the smallest). */
  readonly pairedCpuRatio: number | null;
}

export interface SizeFigures {
  readonly historyRows: number;
  readonly buildSeconds: number;
  /** Per round: the incremental run's wall seconds, server CPU seconds and the load average before it. */
  readonly rounds: readonly Round[];
  readonly medianWall: number;
  readonly medianCpu: number | null;
  /** Every round's full run after it changed nothing. */
  readonly agree: boolean;
}

interface Round {
  wall: number;
  cpu: number | null;
  load: number;
  changedKeys: number;
  agree: boolean;
}

const HISTORY = {
  start: '2024-03-10 04:00:00+00',
  seconds: 730 * 86_400,
  from: '2024-03-01',
  to: '2026-03-09',
};
const NOW = '2026-03-09T12:00:00Z';
/**
 * The blocks of changed rows the rounds take in turn: a day of the 100,000-row history holds about
 * 137 provider transactions, three blocks of 4 × 10.
 */
const BLOCKS = 3;

interface Options {
  sizes?: readonly number[];
  days?: number;
  perDay?: number;
  rounds?: number;
  /** Keep each size's reconciled history (a template database) for `reuse`. */
  keep?: boolean;
  reuse?: boolean;
  log?: (line: string) => void;
}

export async function benchNightlyChanges(options: Options = {}): Promise<NightlyChangesFigures> {
  const sizes = options.sizes ?? [100_000, 1_000_000];
  const days = options.days ?? 30;
  const perDay = options.perDay ?? 10;
  const rounds = options.rounds ?? 9;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dates = Array.from({ length: days }, (_, i) => addDays(HISTORY.to, -i));
  const server = await openBenchServer();
  const templates = sizes.map((n) => `recon_bench_nightly_changes_${n}_${days}d`);
  const copies = templates.map((t) => `${t}_${process.pid}`);
  try {
    const buildSeconds: number[] = [];
    for (const [i, historyRows] of sizes.entries()) {
      buildSeconds.push(
        await prepareTemplate(server, templates[i]!, historyRows, dates, options.reuse === true, log),
      );
    }
    const measured: Round[][] = sizes.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (const [i, historyRows] of sizes.entries()) {
        const round = await measureRound(server, templates[i]!, copies[i]!, dates, perDay, r % BLOCKS);
        measured[i]!.push(round);
        log(
          `  round ${r + 1}, ${historyRows.toLocaleString('en')} history rows: ${round.changedKeys} changed keys over ${days} days ` +
            `reconciled in ${round.wall} s, server CPU ${round.cpu ?? '?'} s (load average ${round.load.toFixed(1)}); ` +
            `the full run after it ${round.agree ? 'agrees' : 'DISAGREES'}`,
        );
      }
    }
    const figures = sizes.map((historyRows, i) => sizeFigures(historyRows, buildSeconds[i]!, measured[i]!));
    const result = ratios(days, perDay, figures);
    for (const s of figures) log(describeSize(s));
    const first = figures[0]!;
    const last = figures[figures.length - 1]!;
    log(
      `nightly changes: ${days} days × ${perDay} of each kind a round, ${rounds} rounds alternated; ` +
        `${last.historyRows.toLocaleString('en')} / ${first.historyRows.toLocaleString('en')} history rows, the medians' ratio: ` +
        `wall ${result.wallRatio}x, server CPU ${result.cpuRatio ?? '?'}x (target at most 1.2x); ` +
        `the rounds' own CPU ratios, median ${result.pairedCpuRatio ?? '?'}x`,
    );
    return result;
  } finally {
    await dropScratch(server, options.keep === true ? copies : [...copies, ...templates], log);
  }
}

/**
 * A size's reconciled history, the template its rounds copy: built (generated, reconciled month by
 * month, its days matched again), or, with `reuse`, a kept one migrated to this code's schema. Returns
 * the seconds a build took (0 when reused).
 */
async function prepareTemplate(
  server: BenchServer,
  template: string,
  historyRows: number,
  dates: readonly string[],
  reuse: boolean,
  log: (line: string) => void,
): Promise<number> {
  if (reuse && (await server.exists(template))) {
    // A kept history matched by other code: its days are matched again in full first, or each round
    // would (a run over changed keys needs its dates matched by the same code and settings).
    const kept = server.open(template, 1);
    try {
      await migrateToLatest(kept.db);
      await matchDaysAgain(kept.db, dates, true);
    } finally {
      await kept.close();
    }
    return 0;
  }
  const b0 = performance.now();
  const built = await server.create(template);
  try {
    await buildHistory(built.db, historyRows, dates);
  } finally {
    await built.db.destroy();
  }
  const seconds = round2((performance.now() - b0) / 1000);
  log(`  ${historyRows.toLocaleString('en')} history rows generated and reconciled in ${seconds} s`);
  return seconds;
}

/**
 * One round on a fresh copy of the template: its days matched in full (not timed), block `block`'s
 * changes written, the run over the changed keys timed, then a full run that must change nothing.
 * The server's other work (autovacuum's workers, whose CPU the server's counts when they end) is
 * waited out before the timed run.
 */
async function measureRound(
  server: BenchServer,
  template: string,
  copy: string,
  dates: readonly string[],
  perDay: number,
  block: number,
): Promise<Round> {
  const { db } = await server.create(copy, { template });
  try {
    for (const range of rangesOfDates(dates)) await reconcileRange(db, { ...range, now: NOW, full: true });
    await writeChanges(db, dates, perDay, block);
    await serverQuiet(db);
    const load = loadavg()[0]!;
    // RECON_PROFILE's statement lines of the timed run, between two marks on stderr.
    if (process.env.RECON_PROFILE) process.stderr.write(`-- timed run of ${copy}, block ${block + 1}\n`);
    const cpu0 = await pgBackendCpuSeconds(db);
    const t0 = performance.now();
    let changedKeys = 0;
    for (const range of rangesOfDates(dates)) {
      const run = await reconcileRange(db, { ...range, now: NOW });
      if (run.scope !== 'incremental')
        throw new Error(`the run over the changed days matched ${run.scope} (${run.fullBecause ?? ''})`);
      changedKeys += run.changedKeys ?? 0;
    }
    const wall = round2((performance.now() - t0) / 1000);
    const cpu1 = await pgBackendCpuSeconds(db);
    const cpu = cpu0 === null || cpu1 === null ? null : round2(cpu1 - cpu0);
    if (process.env.RECON_PROFILE) process.stderr.write(`-- end of the timed run\n`);
    const before = await claimsDigest(db);
    let agree = true;
    for (const range of rangesOfDates(dates)) {
      agree &&= nothingChanged(await reconcileRange(db, { ...range, now: NOW, full: true }));
    }
    agree &&= (await claimsDigest(db)) === before;
    return { wall, cpu, load, changedKeys, agree };
  } finally {
    await db.destroy();
    await server.drop(copy);
  }
}

/**
 * Waits (at most 30 s) until no autovacuum worker runs on the server, its dirty buffers written first
 * (a checkpoint; the copy's files are written and synced by CREATE DATABASE), so that the timed run
 * shares the server with nothing of the bench's own.
 */
async function serverQuiet(db: Kysely<Database>): Promise<void> {
  await sql`checkpoint`.execute(db);
  for (let i = 0; i < 60; i++) {
    const r = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where backend_type = 'autovacuum worker'`.execute(db);
    if (r.rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function sizeFigures(historyRows: number, buildSeconds: number, rounds: readonly Round[]): SizeFigures {
  const cpus = rounds.map((r) => r.cpu);
  return {
    historyRows,
    buildSeconds,
    rounds,
    medianWall: median(rounds.map((r) => r.wall)),
    medianCpu: cpus.some((c) => c === null) ? null : median(cpus as number[]),
    agree: rounds.every((r) => r.agree),
  };
}

function ratios(days: number, perDay: number, sizes: readonly SizeFigures[]): NightlyChangesFigures {
  const first = sizes[0]!;
  const last = sizes[sizes.length - 1]!;
  const paired = last.rounds.map((r, i) => {
    const base = first.rounds[i]?.cpu;
    return r.cpu === null || base === null || base === undefined || base === 0 ? null : r.cpu / base;
  });
  return {
    days,
    perDay,
    sizes,
    wallRatio: round2(last.medianWall / first.medianWall),
    cpuRatio:
      last.medianCpu === null || first.medianCpu === null || first.medianCpu === 0
        ? null
        : round2(last.medianCpu / first.medianCpu),
    pairedCpuRatio: paired.some((p) => p === null) ? null : round2(median(paired as number[])),
  };
}

/** A size's medians and spread (the quartiles and the extremes), wall and server CPU. */
function describeSize(s: SizeFigures): string {
  const spread = (xs: readonly number[]) => {
    const q = [...xs].sort((a, b) => a - b);
    const at = (p: number) => q[Math.round(p * (q.length - 1))]!;
    return `median ${median(q)} s (quartiles ${at(0.25)}–${at(0.75)}, extremes ${q[0]}–${q[q.length - 1]})`;
  };
  const cpus = s.rounds.map((r) => r.cpu);
  const loads = s.rounds.map((r) => r.load);
  return (
    `  ${s.historyRows.toLocaleString('en')} history rows, ${s.rounds.length} rounds: wall ${spread(s.rounds.map((r) => r.wall))}; ` +
    `server CPU ${cpus.some((c) => c === null) ? '?' : spread(cpus as number[])}; ` +
    `load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}; full runs after ${s.agree ? 'agree' : 'DISAGREE'}`
  );
}

/** The history as the nightly runs left it: generated, reconciled month by month, then the days once more. */
async function buildHistory(
  db: Kysely<Database>,
  historyRows: number,
  dates: readonly string[],
): Promise<void> {
  await insertBenchLoad(db);
  await generateRows(db, 1, historyRows, HISTORY.start, HISTORY.seconds, { duplicates: true });
  await sql`vacuum analyze`.execute(db);
  await reconcileMonthByMonth(db, { from: HISTORY.from, to: HISTORY.to, now: NOW });
  await matchDaysAgain(db, dates, false);
}

/**
 * The days matched again (in full first when `full`, after a change of code), then once more: the
 * history's runs wrote after the snapshots of the months before them (claims noted as changes), so
 * that each round's run starts from its own changes.
 */
async function matchDaysAgain(db: Kysely<Database>, dates: readonly string[], full: boolean): Promise<void> {
  if (full) for (const range of rangesOfDates(dates)) await reconcileRange(db, { ...range, now: NOW, full });
  for (const range of rangesOfDates(dates)) await reconcileRange(db, { ...range, now: NOW });
  await sql`vacuum analyze`.execute(db);
}

/**
 * Block `round`'s changes on each of `dates`: `perDay` rows of each kind, taken in transaction id
 * order from the day's provider transactions (a block of 4 × perDay, so that no row changes twice on
 * one copy and every kind changes rows of its own).
 */
async function writeChanges(
  db: Kysely<Database>,
  dates: readonly string[],
  perDay: number,
  round: number,
): Promise<void> {
  await sql`create temp table if not exists bench_day_rows (kind int, transaction_id text, merchant_transaction_id text,
      transaction_on date, amount_cents bigint, currency text)`.execute(db);
  await sql`truncate bench_day_rows`.execute(db);
  const block = 4 * perDay;
  await sql`insert into bench_day_rows
    select (n - 1 - ${round * block}::int) / ${perDay}::int, transaction_id, merchant_transaction_id, transaction_on,
      amount_cents, currency
    from (select p.*, row_number() over (partition by transaction_on order by transaction_id) as n
      from provider_transactions p
      where transaction_on = any (${dates}::date[]) and transaction_id like 'T%') p
    where n > ${round * block}::int and n <= ${(round + 1) * block}::int`.execute(db);
  const rows = await sql<{ n: number }>`select count(*)::int as n from bench_day_rows`.execute(db);
  if (rows.rows[0]!.n !== block * dates.length)
    throw new Error(
      `block ${round + 1} needs ${block} provider transactions a day: give a larger history or fewer per day`,
    );
  await sql`update provider_transactions p set status = case when p.status = 'SUCCESSFUL' then 'REJECTED' else 'SUCCESSFUL' end,
      raw_status = case when p.status = 'SUCCESSFUL' then 'REJECTED' else 'SUCCESSFUL' end
    from bench_day_rows b where b.kind = 0 and p.transaction_id = b.transaction_id`.execute(db);
  await sql`update merchant_ledger l set amount_cents = l.amount_cents + 1
    from bench_day_rows b where b.kind = 1 and l.merchant_transaction_id = b.merchant_transaction_id`.execute(
    db,
  );
  await sql`insert into notifications (kind, delivery_key, transaction_id, merchant_transaction_id, transaction_type,
      status, raw_status, amount_cents, fee_cents, currency, payload, received_at)
    select 'transaction', encode(sha256(convert_to('bench-nightly-changes-' || b.transaction_id, 'UTF8')), 'hex'),
      b.transaction_id, b.merchant_transaction_id, 'DEBIT', 'FAILED', 'FAILED', b.amount_cents, 0, b.currency, '{}',
      b.transaction_on + interval '1 day'
    from bench_day_rows b where b.kind = 2`.execute(db);
  await sql`insert into provider_returns (return_transaction_id, original_transaction_id, merchant_transaction_id,
      amount_cents, currency, returned_on, return_code, source, load_id, first_load_id, raw)
    select 'R' || substr(b.transaction_id, 2), b.transaction_id, b.merchant_transaction_id, b.amount_cents, b.currency,
      b.transaction_on, '901', 'report-returns', 1, 1, '{}'
    from bench_day_rows b where b.kind = 3`.execute(db);
  // The generated history has no returns: the statistics of an empty table that now holds a few
  // hundred rows would have the planner loop over them as over one (a warehouse's returns table is
  // never empty, and autovacuum analyzes it as it grows).
  await sql`analyze provider_returns`.execute(db);
}

/**
 * `npm run bench` section: BENCH_NIGHTLY_CHANGES_SIZES (default 100000,1000000),
 * BENCH_NIGHTLY_CHANGES_DAYS (30), BENCH_NIGHTLY_CHANGES_PER_DAY (10 of each kind),
 * BENCH_NIGHTLY_CHANGES_ROUNDS (9, alternated between the sizes).
 */
export const nightlyChangesSteps: BenchStep[] = [
  {
    name: 'nightly-changes',
    async run(c) {
      const env = process.env;
      const f = await benchNightlyChanges({
        sizes: (env.BENCH_NIGHTLY_CHANGES_SIZES ?? '100000,1000000').split(',').map(Number),
        days: Number(env.BENCH_NIGHTLY_CHANGES_DAYS ?? 30),
        perDay: Number(env.BENCH_NIGHTLY_CHANGES_PER_DAY ?? 10),
        rounds: Number(env.BENCH_NIGHTLY_CHANGES_ROUNDS ?? 9),
        log: c.log,
      });
      return f.sizes.map((s) => ({
        name: `nightly's reconcile of ${f.days} days after the same changes (${f.perDay} of each kind a day), median of ${s.rounds.length}`,
        rows: s.historyRows,
        seconds: s.medianWall,
        note:
          `server CPU ${s.medianCpu ?? '?'} s; load ${s.rounds.map((r) => r.load.toFixed(1)).join(', ')}; full run after it ${s.agree ? 'agrees' : 'DISAGREES'}` +
          (s === f.sizes[f.sizes.length - 1]
            ? `; over the smallest (medians): wall ${f.wallRatio}x, CPU ${f.cpuRatio ?? '?'}x (target at most 1.2x)`
            : ''),
      }));
    },
  },
];

if (runAsScript(import.meta.url)) {
  const flags = numberFlags({ days: '--days', perDay: '--per-day', rounds: '--rounds' });
  const i = process.argv.indexOf('--sizes');
  await benchNightlyChanges({
    ...flags,
    ...(i > 0 ? { sizes: process.argv[i + 1]!.split(',').map(Number) } : {}),
    keep: process.argv.includes('--keep'),
    reuse: process.argv.includes('--reuse'),
  });
}
