import { loadavg } from 'node:os';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.ts';
import { DEFAULT_FOLLOW_UP } from '../config/follow-up.ts';
import { addDays } from '../domain/time/calendar.ts';
import { easternDateOf } from '../domain/time/eastern.ts';
import { followUpNonFinal } from '../ingest/follow-up/follow-up-non-final.ts';
import type { createProviderClient } from '../provider/client/index.ts';
import { lastDueDate, reconcileRange } from '../reconcile/reconcile-range.ts';
import { rangesOfDates } from '../workflows/windows.ts';
import {
  median,
  NIGHT,
  type NightBenchOptions,
  nightOf,
  onFreshCopy,
  onNightBench,
  prepareWarehouse,
  round2,
} from './night-setup.ts';
import { environmentSizes, numberFlags, runAsScript } from './script-options.ts';
import { pgBackendCpuSeconds } from './backend-cpu.ts';
import type { BenchStep } from './steps.ts';

/**
 * The nightly run with its follow-up of non-final transactions against the same night without it
 * (issue 25): one warehouse of `historyRows` reconciled provider transactions over two years, of
 * which `nonFinalPercent` % are still PENDING; the night of bench/nightly.ts's NIGHT (every source
 * pulled from the sandbox over HTTP, the window reconciled), then, in the measured variant, what the
 * workflow does after it for the account: the follow-up (RECON_FOLLOW_UP_DAYS and
 * RECON_FOLLOW_UP_PER_NIGHT at their defaults, the oldest first) and the reconcile of the days it
 * changed. The provider's status answers come from a function in the process (half final, half still
 * pending), so the figure is the warehouse's cost of the follow-up; the provider's round trips come
 * on top, one per lookup (measured apart: `lookupRoundTripMs`, the sandbox's status endpoint over
 * loopback). Target: with / without <= 1.3.
 */
export interface FollowUpFigures {
  readonly historyRows: number;
  readonly nonFinal: number;
  readonly lookedUp: number;
  readonly settled: number;
  readonly daysReconciled: number;
  readonly without: number;
  readonly with: number;
  readonly followUpSeconds: number;
  /** Of the follow-up: asking and writing the answers, then reconciling the days they changed. */
  readonly lookupSeconds: number;
  readonly reconcileSeconds: number;
  readonly ratio: number;
  readonly lookupRoundTripMs: number;
}

/** 1 % (or `percent`) of the history PENDING again, spread evenly over its days. */
async function makeNonFinal(db: Kysely<Database>, percent: number): Promise<void> {
  const every = Math.round(100 / percent);
  await sql`update provider_transactions set status = 'PENDING', raw_status = 'PENDING', fee_cents = null
    where transaction_id like 'T%' and substr(transaction_id, 2)::int % ${every}::int = 3`.execute(db);
  await sql`update merchant_ledger set status = 'PENDING'
    where transaction_id like 'T%' and substr(transaction_id, 2)::int % ${every}::int = 3`.execute(db);
}

export async function benchNightlyFollowUp(
  options: NightBenchOptions & { nonFinalPercent?: number } = {},
): Promise<FollowUpFigures> {
  const percent = options.nonFinalPercent ?? 1;
  return onNightBench(options, 1_000_000, { followUp: 'recon_bench_follow_up' }, async (bench, settings) => {
    const { historyRows, repeat, log } = settings;
    const template = settings.templates.followUp;
    await prepareWarehouse(bench, template, {
      historyRows,
      beforeReconcile: (db) => makeNonFinal(db, percent),
      reuse: options.reuse === true,
      log,
    });
    const times = { without: [] as number[], with: [] as number[], followUp: [] as number[] };
    const parts = { lookups: [] as number[], reconcile: [] as number[] };
    let last = {
      nonFinal: 0,
      lookedUp: 0,
      settled: 0,
      days: 0,
      scopes: '',
      lookupSeconds: 0,
      reconcileSeconds: 0,
      reconcileCpuSeconds: null as number | null,
    };
    for (let r = 0; r < repeat; r++) {
      for (const mode of ['without', 'with'] as const) {
        await onFreshCopy(bench.server, template, async (h) => {
          const load = loadavg()[0]!.toFixed(1);
          const t0 = performance.now();
          const night = nightOf(NIGHT.day, NIGHT.now);
          await bench.runNight(h, night);
          const t1 = performance.now();
          if (mode === 'with') last = await followUpAfterNight(h.db, night.from);
          const t2 = performance.now();
          times[mode].push((t2 - t0) / 1000);
          if (mode === 'with') {
            times.followUp.push((t2 - t1) / 1000);
            parts.lookups.push(last.lookupSeconds);
            parts.reconcile.push(last.reconcileSeconds);
          }
          log(
            `  night of ${NIGHT.day} ${mode} follow-up: night ${round2((t1 - t0) / 1000)} s` +
              (mode === 'with'
                ? `, follow-up ${round2((t2 - t1) / 1000)} s (${last.lookedUp} of ${last.nonFinal} non-final asked and written in ${last.lookupSeconds} s, ${last.settled} settled; ${last.days} days reconciled again in ${last.reconcileSeconds} s, server CPU ${last.reconcileCpuSeconds ?? '?'} s: ${last.scopes})`
                : '') +
              ` (load average ${load})`,
          );
        });
      }
    }
    const lookupRoundTripMs = await statusRoundTrip(
      bench.client,
      bench.view.providerTransactions[0]!.transaction_id,
    );
    const figures: FollowUpFigures = {
      historyRows,
      nonFinal: last.nonFinal,
      lookedUp: last.lookedUp,
      settled: last.settled,
      daysReconciled: last.days,
      without: median(times.without),
      with: median(times.with),
      followUpSeconds: median(times.followUp),
      lookupSeconds: median(parts.lookups),
      reconcileSeconds: median(parts.reconcile),
      ratio: round2(median(times.with) / median(times.without)),
      lookupRoundTripMs,
    };
    log(
      `  nightly with follow-up / without (median of ${repeat}, ${historyRows.toLocaleString('en')} history rows, ${figures.nonFinal} non-final within the horizon): ` +
        `${figures.with} s / ${figures.without} s, ratio ${figures.ratio} (target <= 1.3); one status lookup over loopback ${lookupRoundTripMs} ms`,
    );
    return figures;
  });
}

/** What the workflow does after the night for the account: the follow-up, then the days it changed. */
async function followUpAfterNight(db: Kysely<Database>, before: string) {
  const s = DEFAULT_FOLLOW_UP;
  const t0 = performance.now();
  const f = await followUpNonFinal(db, {
    account: 'default',
    environment: 'staging',
    origin: 'workflow',
    // Final now in a fixed pattern: the provider's answer, without its round trip.
    lookupStatus: async (id) => ({
      transaction: { transactionId: id, transactionStatus: Number(id.slice(1)) % 2 ? 'SUCCESS' : 'PENDING' },
    }),
    day: NIGHT.day,
    before,
    horizonDays: s.days,
    limit: s.perNight,
    stuckThrough: lastDueDate(addDays(before, -1), easternDateOf(NIGHT.now), s.stuckPendingDays, {
      civicHoliday: true,
    }),
    now: NIGHT.now,
  });
  const t1 = performance.now();
  // How each run matched (full or over the changed keys, and why full): the bench's reason to exist.
  const scopes = new Map<string, number>();
  const cpu0 = await pgBackendCpuSeconds(db);
  for (const range of rangesOfDates(f.dates)) {
    const run = await reconcileRange(db, { ...range, now: NIGHT.now });
    const how = run.fullBecause ? `full (${run.fullBecause})` : run.scope;
    scopes.set(how, (scopes.get(how) ?? 0) + 1);
  }
  const t2 = performance.now();
  const cpu1 = await pgBackendCpuSeconds(db);
  return {
    reconcileCpuSeconds: cpu0 === null || cpu1 === null ? null : round2(cpu1 - cpu0),
    nonFinal: f.nonFinal,
    lookedUp: f.lookedUp,
    settled: f.settled,
    days: f.dates.length,
    scopes: [...scopes].map(([how, n]) => `${n} ${how}`).join(', '),
    lookupSeconds: round2((t1 - t0) / 1000),
    reconcileSeconds: round2((t2 - t1) / 1000),
  };
}

/** Median time of 20 status lookups of the sandbox over loopback (HTTP, token cached). */
async function statusRoundTrip(client: ReturnType<typeof createProviderClient>, id: string): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await client.transactionStatus(id);
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** `npm run bench` section: BENCH_FOLLOW_UP_HISTORY_ROWS (default 1,000,000). */
export const followUpSteps: BenchStep[] = [
  {
    name: 'nightly-follow-up',
    async run(c) {
      const f = await benchNightlyFollowUp({
        ...environmentSizes({ historyRows: ['BENCH_FOLLOW_UP_HISTORY_ROWS', 1_000_000] }),
        log: c.log,
      });
      return [
        { name: 'nightly job without follow-up', rows: f.historyRows, seconds: f.without },
        {
          name: 'nightly job with follow-up',
          rows: f.historyRows,
          seconds: f.with,
          note: `${f.lookedUp} of ${f.nonFinal} non-final asked, ${f.settled} settled; ratio ${f.ratio} (target <= 1.3)`,
        },
      ];
    },
  },
];

if (runAsScript(import.meta.url)) {
  await benchNightlyFollowUp({
    ...numberFlags({ historyRows: '--history-rows', repeat: '--repeat' }),
    keep: process.argv.includes('--keep'),
    reuse: process.argv.includes('--reuse'),
  });
}
