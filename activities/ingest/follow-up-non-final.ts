import { Context } from '@temporalio/activity';
import { ConfigError } from '../../domain/errors.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { followUpNonFinal } from '../../ingest/follow-up/follow-up-non-final.ts';
import { lastDueDate } from '../../reconcile/reconcile-range.ts';
import { DEFAULT_SETTINGS } from '../../reconcile/settings.ts';
import type { FollowUpResult } from '../../domain/run-summary.ts';
import type { FollowUpInput } from '../../domain/run-summary.ts';
import { accountTarget } from '../account-target.ts';
import type { ActivityDependencies, LookupStatusFn } from '../dependencies.ts';

/** A client that has the status call (provider/client's ProviderClient has). */
function clientLookup<Client>(): LookupStatusFn<Client> {
  return (client, transactionId, signal) => {
    const c = client as { transactionStatus?: (id: string, o: { signal?: AbortSignal }) => Promise<unknown> };
    if (typeof c?.transactionStatus !== 'function')
      throw new ConfigError(
        'this worker has no provider client with a status lookup: start it with recon worker',
      );
    return c.transactionStatus(transactionId, signal ? { signal } : {}) as Promise<Record<string, unknown>>;
  };
}

/**
 * Builds the follow-up activity of the nightly run: one account's non-final transactions older than
 * the night's windows, asked about with that account's own client and credentials
 * (ingest/follow-up/follow-up-non-final.ts), bounded by RECON_FOLLOW_UP_DAYS and
 * RECON_FOLLOW_UP_PER_NIGHT. It runs on the account's provider queue, like the pulls. A retry asks
 * only about what the previous attempt did not (answers within the night are not asked again).
 */
export function createFollowUpNonFinal<Client>(deps: ActivityDependencies<Client>) {
  const lookup = deps.lookupStatus ?? clientLookup<Client>();
  return async function followUpNonFinalTransactions(input: FollowUpInput): Promise<FollowUpResult> {
    const ctx = Context.current();
    const target = accountTarget(deps, input.account);
    const settings = deps.config.followUp;
    const now = input.asOf ?? new Date().toISOString();
    const stuckThrough = lastDueDate(
      addDays(input.before, -1),
      easternDateOf(now),
      settings.stuckPendingDays,
      {
        civicHoliday: DEFAULT_SETTINGS.civicHoliday,
      },
    );
    ctx.heartbeat({ done: 0 });
    return followUpNonFinal(deps.handle.db, {
      account: input.account,
      environment: target.config.environment,
      origin: 'workflow',
      lookupStatus: (id) => lookup(target.client, id, ctx.cancellationSignal),
      day: input.day,
      before: input.before,
      horizonDays: settings.days,
      limit: settings.perNight,
      stuckThrough,
      now,
      ...(ctx.info.workflowExecution ? { workflowId: ctx.info.workflowExecution.workflowId } : {}),
      signal: ctx.cancellationSignal,
      onProgress: (done) => ctx.heartbeat({ done }),
    });
  };
}
