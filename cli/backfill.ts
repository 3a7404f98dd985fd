import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Config } from '../config/config.ts';
import { SOURCES, type Source } from '../domain/records.ts';
import { MAX_WINDOW_DAYS } from '../domain/sources.ts';
import { wholeNumberArg, withDateRange, accountOption } from './options.ts';
import { runCommand } from './run.ts';
import type { TemporalSession } from '../workers/temporal-session.ts';
import type { WatchOutcome } from '../workers/client/watch-backfill.ts';

interface BackfillCliOptions {
  from: string;
  to: string;
  parallelism: number;
  windowDays: number;
  sources?: Source[];
  detach?: boolean;
  cancel?: boolean;
  account?: string;
}

function parseSources(value: string): Source[] {
  const list = value.split(',').map((s) => s.trim());
  const unknown = list.filter((s) => !(SOURCES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`use a comma list of ${SOURCES.join(', ')}`);
  }
  return list as Source[];
}

/** The in-process worker's activities, for embedded Temporal: the warehouse (migrated) and the provider. */
export async function openEmbeddedActivities(config: Config) {
  const { openDatabase } = await import('../db/connect.ts');
  const { migrateToLatest } = await import('../db/migrate.ts');
  const { openProductionActivities } = await import('../workers/production-activities.ts');
  const handle = await openDatabase(config, { poolSize: 12 });
  try {
    if (config.databaseUrl === undefined) {
      const result = await migrateToLatest(handle.db);
      if (result.error) throw result.error;
    }
    const { loadAccounts } = await import('../config/accounts.ts');
    const opened = openProductionActivities(config, handle, { accounts: loadAccounts() });
    return {
      activities: opened.activities,
      accounts: opened.accounts,
      close: async () => {
        await opened.close();
        await handle.close();
      },
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

export function registerBackfill(program: Command): void {
  withDateRange(
    program
      .command('backfill')
      .description(
        'load and reconcile Eastern days --from..--to in windows of at most 40 days: starts the backfill workflow, or re-attaches to the one running for the same range, and shows its progress. Ctrl-C detaches without cancelling. With TEMPORAL_ADDRESS unset, an embedded Temporal and worker run for the length of the command (state kept in the data directory: run the same command again to resume)',
      ),
    'days',
  )
    .option('--parallelism <n>', 'windows loaded at the same time', wholeNumberArg(1, 64), 2)
    .option(
      '--window-days <n>',
      `days per window (at most ${MAX_WINDOW_DAYS})`,
      wholeNumberArg(1, MAX_WINDOW_DAYS),
      MAX_WINDOW_DAYS,
    )
    .addOption(
      new Option('--sources <list>', `comma list of sources (default all: ${SOURCES.join(', ')})`).argParser(
        parseSources,
      ),
    )
    .addOption(
      accountOption(
        'load this provider account only (recon accounts list); default every account, each window once per account',
      ),
    )
    .option('--detach', 'start (or find) the backfill and return at once')
    .option('--cancel', 'cancel the backfill of this range (its running windows are cancelled)')
    .action((options: BackfillCliOptions) => runCommand((config) => runBackfill(config, options)));
}

/**
 * `recon backfill`: checks the range, opens a Temporal session (embedded when TEMPORAL_ADDRESS is
 * unset) and drives the backfill in it; SIGINT or SIGTERM detaches without cancelling.
 */
async function runBackfill(config: Config, options: BackfillCliOptions): Promise<number> {
  const { splitWindows } = await import('../workflows/windows.ts');
  // Throws InvalidDateWindow, a usage error (exit 2), before anything starts.
  splitWindows(options.from, options.to);
  const { loadAccounts, selectAccounts } = await import('../config/accounts.ts');
  const accounts = selectAccounts(loadAccounts(), options.account).map((a) => a.name);

  const { installRuntime, shutdownRuntime } = await import('../workers/runtime.ts');
  installRuntime({ level: 'ERROR', shutdownSignals: [] });
  const { openTemporalSession, embeddedTemporalDbFile } = await import('../workers/temporal-session.ts');
  const session = await openTemporalSession(config, {
    openActivities: () => openEmbeddedActivities(config),
    dbFile: embeddedTemporalDbFile(config),
  });
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await driveBackfill(session, options, accounts, controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await session.close();
    await shutdownRuntime();
  }
}

/** Cancels, or starts (or re-attaches to) the backfill and watches it to its end; the exit code. */
async function driveBackfill(
  session: TemporalSession,
  options: BackfillCliOptions,
  accounts: string[],
  signal: AbortSignal,
): Promise<number> {
  const { backfillWorkflowId } = await import('../workflows/windows.ts');
  const { parallelism, windowDays, sources } = options;
  const workflowId = backfillWorkflowId(options.from, options.to, options.account);
  if (options.cancel) {
    await session.client.workflow.getHandle(workflowId).cancel();
    process.stdout.write(`${workflowId}: cancellation requested (running windows are cancelled)\n`);
    return 0;
  }
  const { startBackfill } = await import('../workers/client/backfill.ts');
  const { handle, started } = await startBackfill(session.client, {
    from: options.from,
    to: options.to,
    parallelism,
    windowDays,
    accounts,
    ...(options.account ? { account: options.account } : {}),
    taskQueue: session.taskQueue,
    ...(sources ? { sources } : {}),
  });
  process.stderr.write(
    `${started ? 'started' : 're-attached to running'} ${workflowId} on ${session.embedded ? `embedded Temporal ${session.address}` : session.address}\n`,
  );
  if (options.detach) {
    process.stdout.write(`${workflowId}\n`);
    if (session.embedded) {
      process.stderr.write(
        'embedded Temporal stops with this command: the backfill resumes when you run the same command again\n',
      );
    }
    return 0;
  }
  const { watchBackfill } = await import('../workers/client/watch-backfill.ts');
  const outcome = await watchBackfill(handle, { signal, client: session.client });
  if (outcome.status === 'DETACHED') {
    process.stderr.write(
      `detached from ${workflowId}; it ${session.embedded ? 'resumes when you run the same command again' : 'keeps running'}; --cancel cancels it\n`,
    );
    return 130;
  }
  if (outcome.status === 'COMPLETED') {
    const result = await handle.result();
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    const { warnRejectedInRange } = await import('./load-file.ts');
    warnRejectedInRange(result.rowsRejected, result);
    return 0;
  }
  printUnfinished(workflowId, outcome);
  return 1;
}

/** A backfill that failed or was cancelled: its failed windows and where each account stands. */
function printUnfinished(workflowId: string, outcome: WatchOutcome): void {
  for (const f of outcome.progress?.failures ?? [])
    process.stderr.write(
      `failed ${f.account === undefined ? '' : `account ${f.account} `}${f.from}..${f.to}: ${f.message}\n`,
    );
  for (const a of outcome.progress?.accounts ?? []) {
    process.stderr.write(
      `account ${a.account}: ${a.windowsFailed > 0 ? 'FAILED' : a.windowsLeft > 0 ? 'unfinished' : 'completed'}, ` +
        `${a.windowsDone} of ${a.windowsTotal} windows done, ${a.windowsFailed} failed, ${a.rowsLoaded} rows loaded\n`,
    );
  }
  process.stderr.write(`${workflowId}: ${outcome.status.toLowerCase()}\n`);
}
