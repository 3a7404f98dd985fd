import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DatabaseHandle } from '../db/connect.ts';
import { createDatabase } from '../db/database-on-client.ts';
import { createPool } from '../db/pool.ts';
import { acquireWarehouse, warehousePaths } from '../db/embedded-warehouse.ts';
import { migrateToLatest } from '../db/migrate.ts';
import type { Config } from '../config/config.ts';
import { backfillProgress, startBackfill } from '../workers/client/backfill.ts';
import { installRuntime, shutdownRuntime } from '../workers/runtime.ts';
import { upsertNightlySchedule } from '../workers/client/schedule.ts';
import { watchBackfill } from '../workers/client/watch-backfill.ts';
import { addDays } from '../domain/time/calendar.ts';
import { easternDayStartUtc, easternToUtc } from '../domain/time/eastern.ts';
import { describeFollowUp, pendingCount, providerAsOf } from './demo-follow-up.ts';
import { demoScores, loadDemoMerchantSides, startDemoAccounts } from './demo-accounts.ts';
import { explainAndResolve } from './demo-resolve.ts';
import { loadReportData } from '../reconcile/report/report-data.ts';
import { formatReport } from '../reconcile/report/format-summary.ts';
import type { NightlyResult } from '../workflows/types.ts';
import { openProductionActivities } from '../workers/production-activities.ts';
import { openTemporalSession, type TemporalSession } from '../workers/temporal-session.ts';

export interface DemoOptions {
  readonly from: string;
  readonly to: string;
  readonly transactions: number;
  /** Stay up at the end until Ctrl-C (Temporal and its web UI). */
  readonly keep: boolean;
  /** Delete the warehouse of the data directory first. */
  readonly fresh: boolean;
  /** Serve the workbench over the demo warehouse at the end and stay up (keep does too). */
  readonly serve?: boolean;
}

/**
 * `recon demo`: the whole pipeline on embedded defaults, from a fresh clone. The embedded warehouse of
 * the data directory (the one every later command and `recon warehouse` use, kept after the demo;
 * `fresh` deletes it first), the sandbox provider on 127.0.0.1, an ephemeral
 * Temporal dev server with its UI (or TEMPORAL_ADDRESS, with a worker in this process on its own task
 * queue, since only this process reaches the sandbox) and a worker; a backfill of from..to, one
 * nightly run through the schedule (a schedule backfill at 02:30 of `to`, so it covers the day it
 * stands for), and the reconciliation report. Everything is stopped at the end and on Ctrl-C.
 * Returns the exit code.
 */
/** The workbench over the demo warehouse, on PORT (else 8080), with a fresh operator account. */
async function serveDemoWorkbench(
  connectionString: string,
  config: Config,
  temporal: { address: string; namespace: string },
) {
  const { randomBytes } = await import('node:crypto');
  const { addUser } = await import('../workbench/auth/accounts.ts');
  const { startWorkbench } = await import('../workbench/start.ts');
  const running = await startWorkbench(
    {
      databaseUrl: connectionString,
      dataDir: config.dataDir,
      temporalAddress: temporal.address,
      temporalNamespace: temporal.namespace,
    },
    { port: config.port ?? 8080, host: '127.0.0.1' },
  );
  const pool = createPool(connectionString, 1);
  const db = createDatabase(pool);
  const password = randomBytes(12).toString('base64url');
  try {
    await addUser(db, { username: 'demo', role: 'operator', password });
  } finally {
    await db.destroy();
  }
  return { url: running.url, username: 'demo', password, close: running.close };
}

export async function runDemo(config: Config, options: DemoOptions): Promise<number> {
  const t0 = Date.now();
  const say = (line: string) => process.stderr.write(`demo: ${line}\n`);
  installRuntime({ level: 'ERROR', shutdownSignals: [] });
  const controller = new AbortController();
  const onSignal = () => {
    if (!controller.signal.aborted) say('stopping (Ctrl-C)...');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const demo: Demo = {
    config,
    options,
    say,
    seconds: () => `${((Date.now() - t0) / 1000).toFixed(1)}s`,
    signal: controller.signal,
    stopped: () => controller.signal.aborted,
    cleanups: [],
  };
  try {
    const warehouse = await openDemoWarehouse(demo);
    if (demo.stopped()) return 130;
    await sayEarlierLoads(demo, warehouse);
    const accounts = await startDemoProvider(demo, warehouse.handle);
    const session = await openDemoTemporal(demo, warehouse, accounts);
    if (demo.stopped()) return 130;
    // The backfill sees the provider as of the end of the last day, the nightly run later: what was
    // still PENDING is followed to its end (sandbox/demo-follow-up.ts).
    providerAsOf(accounts, easternDayStartUtc(addDays(options.to, 1)));
    const failed = await runDemoBackfill(
      demo,
      session,
      accounts.accounts.list.map((a) => a.name),
    );
    if (failed !== undefined) return failed;
    say(
      `after the backfill, ${await pendingCount(warehouse.handle)} provider transaction(s) are still PENDING`,
    );
    providerAsOf(accounts, undefined);
    const nightly = await runDemoNightly(demo, session);
    if (!nightly) return 130;
    for (const line of await describeFollowUp(warehouse.handle, nightly.followUp)) say(line);
    await printDemoResults(demo, warehouse, accounts, session);
    if ((options.serve || options.keep) && !demo.stopped()) {
      const workbench = await serveDemoWorkbench(warehouse.connectionString, config, session);
      demo.cleanups.push(() => workbench.close());
      process.stdout.write(
        `workbench: ${workbench.url}\n  sign in as ${workbench.username} / ${workbench.password} (operator; a demo account of this run)\n\n`,
      );
    }
    if ((options.keep || options.serve) && !demo.stopped()) {
      say('running until Ctrl-C');
      await new Promise((r) => controller.signal.addEventListener('abort', r, { once: true }));
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const cleanup of demo.cleanups.reverse()) await cleanup().catch(() => {});
    await shutdownRuntime().catch(() => {});
    say(`stopped everything (${demo.seconds()})`);
  }
}

/** One demo run: its settings, its voice on stderr, Ctrl-C, and what to stop at the end (in reverse). */
interface Demo {
  readonly config: Config;
  readonly options: DemoOptions;
  readonly say: (line: string) => void;
  /** Time since the start, for the log. */
  readonly seconds: () => string;
  readonly signal: AbortSignal;
  readonly stopped: () => boolean;
  readonly cleanups: (() => Promise<unknown>)[];
}

interface DemoWarehouse {
  readonly handle: DatabaseHandle;
  readonly connectionString: string;
  readonly pgDir: string;
}

/** The embedded warehouse of the data directory, migrated (kept after the demo). */
async function openDemoWarehouse({ config, options, say, cleanups }: Demo): Promise<DemoWarehouse> {
  const { pgDir } = warehousePaths(config.dataDir);
  if (config.databaseUrl) say('DATABASE_URL is not used: the demo runs on the embedded warehouse');
  const pg = await acquireWarehouse(config.dataDir, { fresh: options.fresh });
  cleanups.push(() => pg.release());
  say(
    `warehouse: embedded PostgreSQL in ${pgDir} (${options.fresh ? 'fresh' : pg.started ? 'started' : 'already running'}; kept after the demo)`,
  );
  const pool = createPool(pg.connectionString, 16);
  const db = createDatabase(pool);
  cleanups.push(() => db.destroy());
  const handle: DatabaseHandle = {
    db,
    pool,
    connectionString: pg.connectionString,
    close: () => db.destroy(),
  };
  const migrated = await migrateToLatest(db);
  if (migrated.error) throw migrated.error;
  return { handle, connectionString: pg.connectionString, pgDir };
}

/** Says so when the warehouse holds loads of earlier runs: the demo adds to them. */
async function sayEarlierLoads({ say }: Demo, { handle }: DemoWarehouse): Promise<void> {
  const earlier = await handle.db
    .selectFrom('loads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  if (earlier.n > 0) {
    say(`the warehouse already holds ${earlier.n} loads: the demo adds to them (--fresh starts over)`);
  }
}

/**
 * Two provider accounts, CAD and USD, each with the merchant's side of its history: its ledger, the
 * notifications it received and the contracted fees, which disagree with the provider in known ways
 * (the sandbox's ground truth).
 */
async function startDemoProvider({ config, options, say, cleanups }: Demo, handle: DatabaseHandle) {
  const demo = await startDemoAccounts({ ...options, dataDir: config.dataDir });
  cleanups.push(() => demo.close());
  for (const a of demo.list) {
    say(
      `sandbox account ${a.name} (${a.currency}) at ${demo.sandbox.baseUrl}: ${a.view.history.options.transactions} transactions ${options.from}..${options.to}`,
    );
  }
  for (const side of await loadDemoMerchantSides(handle, demo)) {
    const view = demo.list.find((a) => a.name === side.name)!.view;
    // Planted on business dates the backfill covers: a return can fall after the last day of the range.
    const plantedInRange = view.expected.filter(
      (e) => e.businessDate >= options.from && e.businessDate <= options.to,
    ).length;
    say(
      `merchant side of ${side.name} loaded: ${side.ledger.rowsLoaded} ledger entries, ${side.notifications.stored} notifications ` +
        `(${plantedInRange} discrepancies planted by the sandbox in ${options.from}..${options.to})`,
    );
  }
  return demo;
}

type DemoProvider = Awaited<ReturnType<typeof startDemoProvider>>;

/** Temporal (the dev server, or the cluster of TEMPORAL_ADDRESS) with a worker on the demo's warehouse and accounts. */
async function openDemoTemporal(
  { config, say, seconds, cleanups }: Demo,
  warehouse: DemoWarehouse,
  demo: DemoProvider,
): Promise<TemporalSession> {
  // The command's configuration on the demo's warehouse, in staging: the environment is not read again.
  const demoConfig: Config = Object.freeze({
    ...config,
    databaseUrl: warehouse.connectionString,
    environment: 'staging',
  });
  const session = await openTemporalSession(demoConfig, {
    ui: true,
    workerWithCluster: true,
    ...(demoConfig.temporalAddress ? { taskQueue: `recon-demo-${randomBytes(3).toString('hex')}` } : {}),
    openActivities: async () =>
      openProductionActivities(demoConfig, warehouse.handle, { accounts: demo.accounts }),
  });
  cleanups.push(() => session.close());
  say(
    `Temporal ${session.embedded ? 'dev server' : 'cluster'} at ${session.address}` +
      (session.uiUrl ? `, web UI ${session.uiUrl} (while the demo runs)` : '') +
      `; worker on task queue ${session.taskQueue} (${seconds()})`,
  );
  return session;
}

/** The backfill of the range for both accounts; the exit code when it did not complete. */
async function runDemoBackfill(
  { options, say, signal }: Demo,
  session: TemporalSession,
  accountNames: string[],
): Promise<number | undefined> {
  say(
    `backfill ${options.from}..${options.to} in windows of at most 40 days, for accounts ${accountNames.join(' and ')}`,
  );
  const backfillStart = Date.now();
  const { handle: backfill } = await startBackfill(session.client, {
    from: options.from,
    to: options.to,
    accounts: accountNames,
    taskQueue: session.taskQueue,
  });
  const outcome = await watchBackfill(backfill, { signal, client: session.client });
  if (outcome.status === 'DETACHED') return 130;
  const progress = await backfillProgress(backfill);
  const backfillMs = Date.now() - backfillStart;
  if (outcome.status !== 'COMPLETED') {
    for (const f of progress.failures) {
      say(`${f.account ?? ''} window ${f.from}..${f.to} failed: ${f.message}`.trim());
    }
    say(`backfill ${outcome.status.toLowerCase()}`);
    return 1;
  }
  say(
    `backfill done: ${progress.windowsTotal} windows, ${progress.rowsLoaded} rows in ${(backfillMs / 1000).toFixed(1)}s ` +
      `(${Math.round((progress.rowsLoaded * 1000) / backfillMs)} rows/s); ` +
      (progress.accounts ?? []).map((a) => `${a.account} ${a.rowsLoaded} rows`).join(', '),
  );
  return undefined;
}

/**
 * One nightly run as the schedule would have started it at 02:30 Toronto on the last day: a schedule
 * backfill sets TemporalScheduledStartTime, so the run covers that day and its look-back. Its result,
 * or undefined when the demo was stopped first.
 */
async function runDemoNightly(
  { options, say, seconds, stopped }: Demo,
  session: TemporalSession,
): Promise<NightlyResult | undefined> {
  const schedule = await upsertNightlySchedule(session.client, { taskQueue: session.taskQueue });
  const at = Date.parse(easternToUtc(options.to, '023000').utc);
  await schedule.handle.backfill({
    start: new Date(at - 60_000),
    end: new Date(at + 60_000),
    overlap: 'ALLOW_ALL',
  });
  say(`nightly run for ${options.to} started by the schedule ${schedule.handle.scheduleId}`);
  let nightly: NightlyResult | undefined;
  for (let i = 0; i < 600 && !nightly && !stopped(); i++) {
    for await (const w of session.client.workflow.list({ query: `WorkflowType = 'nightlyWorkflow'` })) {
      nightly = await session.client.workflow.getHandle(w.workflowId).result();
      break;
    }
    if (!nightly) await sleep(100);
  }
  if (!nightly) return undefined;
  say(
    `nightly done: ${nightly.from}..${nightly.to} (scheduled for ${nightly.scheduledFor}), ${nightly.rowsLoaded} rows re-read (${seconds()})`,
  );
  return nightly;
}

/**
 * The report's headline, the loads by source, the ground truth per account, candidates, manual
 * matches and write-offs (sandbox/demo-resolve.ts), and where to look next.
 */
async function printDemoResults(
  { options, seconds }: Demo,
  { handle, pgDir }: DemoWarehouse,
  demo: DemoProvider,
  session: TemporalSession,
): Promise<void> {
  const { db } = handle;
  const report = await loadReportData(db, { from: options.from, to: options.to });
  // The headline (discrepancies by kind); `recon report` prints the per-day tables too.
  const headline = formatReport(report).split('\nunresolved discrepancies by day')[0];
  const loads = await db
    .selectFrom('loads')
    .select([
      'source',
      (eb) => eb.fn.countAll<number>().as('loads'),
      (eb) => eb.fn.sum<number>('rows_loaded').as('rows'),
    ])
    .where('status', '=', 'committed')
    .groupBy('source')
    .orderBy('source')
    .execute();
  process.stdout.write(
    `\n${headline}\nloads by source (backfill + nightly)\n` +
      loads
        .map(
          (l) =>
            `  ${l.source.padEnd(20)} ${String(l.loads).padStart(3)} loads ${String(l.rows).padStart(8)} rows\n`,
        )
        .join('') +
      '\n',
  );
  // The pipeline's findings against what the sandbox planted (as test/integration/ground-truth-pipeline.test.ts), per account.
  process.stdout.write(
    `ground truth per account\n${(await demoScores(handle, demo, { from: options.from, to: options.to }))
      .map((l) => `  ${l}\n`)
      .join('')}\n`,
  );
  // Then what a person does with what does not match, on the CAD account (scored before it).
  process.stdout.write(
    await explainAndResolve(handle, demo.list[0]!, { from: options.from, to: options.to }),
  );
  process.stdout.write(
    [
      `demo finished in ${seconds()}.`,
      'where to look next:',
      ...(session.uiUrl
        ? [
            `  Temporal UI: ${session.uiUrl}${options.keep || options.serve ? '' : ' (run with --keep to browse it; it stops with the demo)'}`,
          ]
        : []),
      ...(options.serve
        ? []
        : [
            '  workbench: recon demo --serve (the demo, then the workbench over its warehouse, with a demo sign-in)',
          ]),
      `  warehouse (kept in ${pgDir}): recon report --from ${options.from} --to ${options.to}`,
      '  SQL: recon warehouse start, then recon warehouse psql (as the analyst login), e.g.',
      '    select source, count(*), sum(rows_loaded) from loads group by source;',
      '    select kind, count(*) from discrepancies where resolved_at is null group by kind order by 2 desc;',
      '    select * from pull_cursors order by window_from, source;',
      '',
    ].join('\n'),
  );
}
