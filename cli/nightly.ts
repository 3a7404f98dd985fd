import type { Command } from 'commander';
import type { NightlyResult } from '../workflows/types.ts';
import { type AccountName, DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import { accountOption, dateArg, instantArg, wholeNumberArg } from './options.ts';
import { EXIT, runCommand } from './run.ts';

/** What a person reads after a night: loaded, followed up, settled, found, per account. */
export function formatNightly(result: NightlyResult): string {
  const lines = [`nightly ${result.from}..${result.to}: ${result.rowsLoaded} row(s) loaded`];
  const byAccount = new Map<string, { rows: number; windows: number; open: number; opened: number }>();
  for (const w of result.windows) {
    const a = byAccount.get(w.account ?? DEFAULT_ACCOUNT) ?? { rows: 0, windows: 0, open: 0, opened: 0 };
    a.rows += w.rowsLoaded;
    a.windows++;
    a.opened += w.reconcile.counts['lifecycle.opened'] ?? 0;
    a.open += (w.reconcile.discrepancies ?? []).reduce((n, d) => n + d.count, 0);
    byAccount.set(w.account ?? DEFAULT_ACCOUNT, a);
  }
  for (const [account, a] of byAccount) {
    lines.push(
      `  account ${account}: loaded ${a.rows} row(s) in ${a.windows} window(s); ${a.open} discrepanc${a.open === 1 ? 'y' : 'ies'} in the windows, ${a.opened} new`,
    );
  }
  for (const f of result.followUp ?? []) {
    const found = f.reconciled.reduce((n, r) => n + (r.counts['lifecycle.opened'] ?? 0), 0);
    lines.push(
      `  account ${f.account}: followed up ${f.lookedUp} of ${f.nonFinal} non-final transaction(s): ${f.settled} settled, ${f.stillPending} still pending, ${f.failed} lookup(s) failed; ` +
        `${f.dates.length} day(s) reconciled again, ${found} discrepanc${found === 1 ? 'y' : 'ies'} opened`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function registerNightly(program: Command): void {
  program
    .command('nightly')
    .description(
      'run one nightly run for the scheduled Eastern day --date in the foreground: the workflow the schedule starts (pull and reconcile the day and its look-back, follow non-final transactions up, retention), then print what it loaded, followed up, settled and found. Exit 1 when a window or a follow-up failed. With TEMPORAL_ADDRESS unset, an embedded Temporal and worker run for the length of the command',
    )
    .requiredOption('--date <YYYY-MM-DD>', 'the scheduled Eastern day (required)', dateArg)
    .addOption(accountOption('this provider account only (recon accounts list); default every account'))
    .option(
      '--lookback-days <n>',
      'days before --date also covered (default 3, as the schedule)',
      wholeNumberArg(0, 366),
    )
    .option(
      '--now <instant>',
      'judge grace periods, stuck_pending and the follow-up as of this ISO-8601 instant (default: now)',
      instantArg,
    )
    .option('--json', 'print the workflow result as JSON')
    .action(
      (opts: { date: string; account?: AccountName; lookbackDays?: number; now?: string; json?: boolean }) =>
        runCommand(async (config) => {
          const { loadAccounts, selectAccounts } = await import('../config/accounts.ts');
          const accounts = selectAccounts(loadAccounts(), opts.account).map((a) => a.name);
          const { installRuntime, shutdownRuntime } = await import('../workers/runtime.ts');
          installRuntime({ level: 'ERROR', shutdownSignals: [] });
          const { openTemporalSession, embeddedTemporalDbFile } =
            await import('../workers/temporal-session.ts');
          const { openEmbeddedActivities } = await import('./backfill.ts');
          const session = await openTemporalSession(config, {
            openActivities: () => openEmbeddedActivities(config),
            dbFile: embeddedTemporalDbFile(config),
          });
          try {
            const { runNightly } = await import('../workers/client/nightly.ts');
            const input = {
              day: opts.date,
              ...(opts.lookbackDays === undefined ? {} : { lookbackDays: opts.lookbackDays }),
              ...(opts.account === undefined ? {} : { accounts }),
              ...(opts.now === undefined ? {} : { asOf: opts.now }),
            };
            process.stderr.write(
              `running the nightly run of ${opts.date} on ${session.embedded ? `embedded Temporal ${session.address}` : session.address}\n`,
            );
            let outcome;
            try {
              outcome = await runNightly(session.client, input, session.taskQueue, opts.account);
            } catch (error) {
              const { failureMessage } = await import('../workflows/window-workflow.ts');
              const cause = (error as { cause?: unknown }).cause;
              process.stderr.write(`recon: nightly ${opts.date} failed: ${failureMessage(cause ?? error)}\n`);
              return EXIT.failed;
            }
            process.stdout.write(
              opts.json ? `${JSON.stringify(outcome.result, null, 2)}\n` : formatNightly(outcome.result),
            );
            const { warnRejectedInRange } = await import('./load-file.ts');
            warnRejectedInRange(
              outcome.result.windows.reduce((n, w) => n + w.rowsRejected, 0),
              outcome.result,
            );
            return 0;
          } finally {
            await session.close();
            await shutdownRuntime();
          }
        }),
    );
}
