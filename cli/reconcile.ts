import type { Command } from 'commander';
import { instantArg, wholeNumberArg, withDateRange, accountOption } from './options.ts';
import { runWithDatabase } from './run.ts';

export function registerReconcile(program: Command): void {
  withDateRange(
    program
      .command('reconcile')
      .description(
        'match provider data, ledger and notifications for Eastern business dates FROM..TO and print the summary',
      ),
    'business dates',
  )
    .option('--now <instant>', 'judge grace periods as of this ISO-8601 instant (default: now)', instantArg)
    .option(
      '--grace-days <n>',
      'business days before missing_at_provider / return_not_booked',
      wholeNumberArg(0),
    )
    .option(
      '--late-after <seconds>',
      'a notification later than this is notification_late',
      wholeNumberArg(0),
    )
    .addOption(accountOption('reconcile this provider account only (default: every account)'))
    .option(
      '--full',
      'match every row of the range, not only what changed since its dates were last matched (the reference run)',
    )
    .option('--json', 'print the summary as JSON (an array of them when several accounts ran)')
    .option(
      '--follow-up-pending <hours>',
      'first follow up, as the nightly run does, the transactions PENDING for longer than this many hours: each account asks the status endpoint with its own credentials (RECON_FOLLOW_UP_DAYS, RECON_FOLLOW_UP_PER_NIGHT)',
      wholeNumberArg(0),
    )
    .action(
      (opts: {
        from: string;
        to: string;
        now?: string;
        graceDays?: number;
        lateAfter?: number;
        json?: boolean;
        full?: boolean;
        followUpPending?: number;
        account?: string;
      }) =>
        runWithDatabase(
          async (handle, config) => {
            const { reconcileAccounts } = await import('../reconcile/reconcile-range.ts');
            const { formatSummary } = await import('../reconcile/report/format-summary.ts');
            if (opts.account !== undefined) {
              const { requireKnownAccount } = await import('./known-account.ts');
              await requireKnownAccount(handle.db, opts.account);
            }
            if (opts.followUpPending !== undefined) {
              const { followUpByHand } = await import('./follow-up-by-hand.ts');
              await followUpByHand(config, handle.db, {
                to: opts.to,
                pendingForHours: opts.followUpPending,
                ...(opts.account !== undefined ? { account: opts.account } : {}),
              });
            }
            const summaries = await reconcileAccounts(handle.db, {
              ...(opts.account !== undefined ? { account: opts.account } : {}),
              from: opts.from,
              to: opts.to,
              ...(opts.now ? { now: opts.now } : {}),
              ...(opts.full ? { full: true } : {}),
              followUpDays: config.followUp.days,
              settings: {
                stuckPendingBusinessDays: config.followUp.stuckPendingDays,
                ...(opts.graceDays !== undefined ? { graceBusinessDays: opts.graceDays } : {}),
                ...(opts.lateAfter !== undefined ? { notificationLateAfterSeconds: opts.lateAfter } : {}),
              },
            });
            const several = summaries.length > 1;
            for (const summary of summaries) {
              if (summary.requested) {
                process.stderr.write(
                  `recon: ${summary.requested.from}..${summary.requested.to} holds data only from ${summary.from} to ${summary.to}: reconciled ${summary.from}..${summary.to}\n`,
                );
              }
              if (!opts.json) {
                process.stdout.write(
                  `${several ? `account ${summary.account}\n` : ''}${formatSummary(summary)}`,
                );
              }
            }
            if (opts.json) {
              const out = several ? summaries : summaries[0];
              process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
            }
          },
          { watch: true },
        ),
    );
}
