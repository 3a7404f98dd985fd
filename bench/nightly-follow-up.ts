import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Database } from '../db/database.ts';
import { DEFAULT_FOLLOW_UP } from '../config/follow-up.ts';
import { loadConfig } from '../config/config.ts';
import { SOURCES } from '../domain/records.ts';
import { addDays } from '../domain/time/calendar.ts';
import { easternDateOf } from '../domain/time/eastern.ts';
import { followUpNonFinal } from '../ingest/follow-up/follow-up-non-final.ts';
import { pullSource } from '../ingest/pull-source.ts';
import { createProviderClient } from '../provider/client/index.ts';
import { lastDueDate, reconcileRange } from '../reconcile/reconcile-range.ts';
import { loadMerchantSide } from '../sandbox/load-merchant-side.ts';
import { deriveMerchantView } from '../sandbox/merchant-view.ts';
import { startSandbox } from '../sandbox/server.ts';
import { rangesOfDates } from '../workflows/windows.ts';
import { insertBenchLoad, reconcileMonthByMonth } from './generate-rows.ts';
import { generateHistory, NIGHT, nightOf, round2, SANDBOX_DAYS } from './nightly.ts';
import { openBenchServer } from './scratch-databases.ts';
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
  readonly ratio: number;
  readonly lookupRoundTripMs: number;
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return round2(s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2);
};

/** 1 % (or `percent`) of the history PENDING again, spread evenly over its days. */
async function makeNonFinal(db: Kysely<Database>, percent: number): Promise<void> {
  const every = Math.round(100 / percent);
  await sql`update provider_transactions set status = 'PENDING', raw_status = 'PENDING', fee_cents = null
    where transaction_id like 'T%' and substr(transaction_id, 2)::int % ${every}::int = 3`.execute(db);
  await sql`update merchant_ledger set status = 'PENDING'
    where transaction_id like 'T%' and substr(transaction_id, 2)::int % ${every}::int = 3`.execute(db);
}

export async function benchNightlyFollowUp(
  options: {
    historyRows?: number;
    dayRows?: number;
    nonFinalPercent?: number;
    repeat?: number;
    log?: (line: string) => void;
  } = {},
): Promise<FollowUpFigures> {
  const historyRows = options.historyRows ?? 1_000_000;
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
  const server = await openBenchServer();
  const template = `recon_bench_follow_up_${historyRows}`;
  const night = nightOf(NIGHT.day, NIGHT.now);
  const runNight = async (handle: DatabaseHandle, n: typeof night) => {
    sandbox.setAsOf(n.now);
    await Promise.all(
      SOURCES.map((source) =>
        pullSource({ handle, client, config }, { source, from: n.from, to: n.to, origin: 'workflow' }),
      ),
    );
    await reconcileRange(handle.db, n);
  };
  try {
    const p0 = performance.now();
    await prepare(server, template, historyRows, options.nonFinalPercent ?? 1, view, runNight);
    log(`  ${template}: prepared in ${((performance.now() - p0) / 1000).toFixed(0)} s`);
    const times = { without: [] as number[], with: [] as number[], followUp: [] as number[] };
    let last = { nonFinal: 0, lookedUp: 0, settled: 0, days: 0 };
    for (let r = 0; r < repeat; r++) {
      for (const mode of ['without', 'with'] as const) {
        const copy = `${template}_run_${process.pid}`;
        const h = await server.create(copy, { template, poolSize: 12 });
        try {
          await sql`vacuum analyze`.execute(h.db);
          const load = loadavg()[0]!.toFixed(1);
          const t0 = performance.now();
          await runNight(h, night);
          const t1 = performance.now();
          if (mode === 'with') last = await followUpAfterNight(h.db, night.from);
          const t2 = performance.now();
          times[mode].push((t2 - t0) / 1000);
          if (mode === 'with') times.followUp.push((t2 - t1) / 1000);
          log(
            `  night of ${NIGHT.day} ${mode} follow-up: night ${round2((t1 - t0) / 1000)} s` +
              (mode === 'with'
                ? `, follow-up ${round2((t2 - t1) / 1000)} s (${last.lookedUp} of ${last.nonFinal} non-final asked, ${last.settled} settled, ${last.days} days reconciled again)`
                : '') +
              ` (load average ${load})`,
          );
        } finally {
          await h.close();
          await server.drop(copy);
        }
      }
    }
    const lookupRoundTripMs = await statusRoundTrip(client, view.providerTransactions[0]!.transaction_id);
    const figures: FollowUpFigures = {
      historyRows,
      nonFinal: last.nonFinal,
      lookedUp: last.lookedUp,
      settled: last.settled,
      daysReconciled: last.days,
      without: median(times.without),
      with: median(times.with),
      followUpSeconds: median(times.followUp),
      ratio: round2(median(times.with) / median(times.without)),
      lookupRoundTripMs,
    };
    log(
      `  nightly with follow-up / without (median of ${repeat}, ${historyRows.toLocaleString('en')} history rows, ${figures.nonFinal} non-final within the horizon): ` +
        `${figures.with} s / ${figures.without} s, ratio ${figures.ratio} (target <= 1.3); one status lookup over loopback ${lookupRoundTripMs} ms`,
    );
    return figures;
  } finally {
    await server.drop(template);
    await server.close();
    await client.close();
    await sandbox.close();
  }
}

/** What the workflow does after the night for the account: the follow-up, then the days it changed. */
async function followUpAfterNight(db: Kysely<Database>, before: string) {
  const s = DEFAULT_FOLLOW_UP;
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
  for (const range of rangesOfDates(f.dates)) await reconcileRange(db, { ...range, now: NIGHT.now });
  return { nonFinal: f.nonFinal, lookedUp: f.lookedUp, settled: f.settled, days: f.dates.length };
}

/** The warehouse as the nights before left it: the history (some of it non-final), reconciled. */
async function prepare(
  server: Awaited<ReturnType<typeof openBenchServer>>,
  template: string,
  historyRows: number,
  nonFinalPercent: number,
  view: ReturnType<typeof deriveMerchantView>,
  runNight: (handle: DatabaseHandle, n: { from: string; to: string; now: string }) => Promise<void>,
): Promise<void> {
  const handle = await server.create(template, { poolSize: 12 });
  try {
    await insertBenchLoad(handle.db);
    await generateHistory(handle.db, historyRows, () => {});
    await makeNonFinal(handle.db, nonFinalPercent);
    await sql`vacuum analyze`.execute(handle.db);
    await reconcileMonthByMonth(handle.db, {
      from: '2024-03-01',
      to: addDays(SANDBOX_DAYS.from, -1),
      now: `${SANDBOX_DAYS.from}T06:30:00Z`,
    });
    await loadMerchantSide(handle, view, 'staging');
    await runNight(handle, nightOf(addDays(NIGHT.day, -1), `${NIGHT.day}T06:30:00Z`));
    await sql`vacuum analyze`.execute(handle.db);
  } finally {
    await handle.close();
  }
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
        historyRows: Number(process.env.BENCH_FOLLOW_UP_HISTORY_ROWS ?? 1_000_000),
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  await benchNightlyFollowUp({
    ...(arg('--history-rows') !== undefined ? { historyRows: arg('--history-rows')! } : {}),
    ...(arg('--repeat') !== undefined ? { repeat: arg('--repeat')! } : {}),
  });
}
