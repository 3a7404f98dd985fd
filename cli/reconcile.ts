import type { Command } from 'commander';
import { runCommand } from './run.ts';

function positiveInt(name: string) {
  return (value: string) => {
    if (!/^\d+$/.test(value)) throw new Error(`${name} must be a non-negative integer, got ${value}`);
    return Number(value);
  };
}

export function registerReconcile(program: Command): void {
  program
    .command('reconcile')
    .description(
      'match provider data, ledger and notifications for Eastern business dates FROM..TO and print the summary',
    )
    .requiredOption('--from <date>', 'first Eastern business date, YYYY-MM-DD')
    .requiredOption('--to <date>', 'last Eastern business date, YYYY-MM-DD')
    .option('--now <iso>', 'judge grace periods as of this instant (default: now)')
    .option(
      '--grace-days <n>',
      'business days before missing_at_provider / return_not_booked',
      positiveInt('--grace-days'),
    )
    .option(
      '--late-after <seconds>',
      'a notification later than this is notification_late',
      positiveInt('--late-after'),
    )
    .option('--json', 'print the summary as JSON')
    .option(
      '--follow-up-pending <hours>',
      'first ask the status endpoint about transactions PENDING for longer than this (needs the RECON_* provider settings)',
      positiveInt('--follow-up-pending'),
    )
    .action(
      (opts: {
        from: string;
        to: string;
        now?: string;
        graceDays?: number;
        lateAfter?: number;
        json?: boolean;
        followUpPending?: number;
      }) =>
        runCommand(async (config) => {
          const { openDatabase } = await import('../db/connect.ts');
          const { reconcileRange } = await import('../reconcile/reconcile-range.ts');
          const { formatSummary } = await import('../reconcile/report/format-summary.ts');
          const handle = await openDatabase(config, { watch: true });
          try {
            if (opts.followUpPending !== undefined) {
              const { createProviderClient } = await import('../provider/client/index.ts');
              const { followUpPendingTransactions } = await import('../reconcile/follow-up-pending.ts');
              const client = createProviderClient(config);
              try {
                const followed = await followUpPendingTransactions(handle.db, {
                  lookupStatus: (id) => client.transactionStatus(id),
                  pendingForHours: opts.followUpPending,
                });
                process.stderr.write(`status follow-up: ${JSON.stringify(followed)}\n`);
              } finally {
                await client.close();
              }
            }
            const summary = await reconcileRange(handle.db, {
              from: opts.from,
              to: opts.to,
              ...(opts.now ? { now: opts.now } : {}),
              settings: {
                ...(opts.graceDays !== undefined ? { graceBusinessDays: opts.graceDays } : {}),
                ...(opts.lateAfter !== undefined ? { notificationLateAfterSeconds: opts.lateAfter } : {}),
              },
            });
            if (summary.requested) {
              process.stderr.write(
                `recon: ${summary.requested.from}..${summary.requested.to} holds data only from ${summary.from} to ${summary.to}: reconciled ${summary.from}..${summary.to}\n`,
              );
            }
            process.stdout.write(
              opts.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary),
            );
          } finally {
            await handle.close();
          }
        }),
    );
  const discrepancies = program.command('discrepancies').description('work with recorded discrepancies');
  discrepancies
    .command('ack')
    .description(
      'acknowledge a discrepancy with a note (kept across re-runs; recorded in discrepancy_events)',
    )
    .argument('<id>', 'discrepancy_id', positiveInt('id'))
    .requiredOption('--note <text>', 'why, what was done')
    .requiredOption('--by <name>', 'who acknowledges')
    .action((id: number, opts: { note: string; by: string }) =>
      runCommand(async (config) => {
        const { openDatabase } = await import('../db/connect.ts');
        const { acknowledgeDiscrepancy } = await import('../reconcile/acknowledge-discrepancy.ts');
        const handle = await openDatabase(config);
        try {
          await acknowledgeDiscrepancy(handle.db, { discrepancyId: id, note: opts.note, by: opts.by });
          process.stdout.write(`discrepancy ${id} acknowledged by ${opts.by}\n`);
        } finally {
          await handle.close();
        }
      }),
    );
}
