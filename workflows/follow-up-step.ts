import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities/index.ts';
import { followUpOptions, reconcileWindowOptions } from './activity-options.ts';
import { providerTaskQueue } from './task-queues.ts';
import type { FollowUpInput, NightlyFollowUp, ReconcileWindowSummary } from './types.ts';
import { rangesOfDates } from './windows.ts';

/**
 * Patch id of the follow-up: nightly runs recorded before it (test/histories/nightly*.json) replay
 * without it; new runs follow each account's non-final transactions after its windows.
 */
export const FOLLOW_UP_PATCH = 'nightly-follow-up';

/**
 * The follow-up of one account after its nightly windows: the status of its non-final transactions
 * older than the windows, asked on the account's provider queue (its rate limit, its credentials);
 * then the days whose transactions settled, or newly became stuck, are reconciled again, so that the
 * next summary judges what the provider said.
 */
export async function followUpAccount(input: FollowUpInput): Promise<NightlyFollowUp> {
  const { followUpNonFinal } = proxyActivities<activities.Activities>({
    ...followUpOptions,
    taskQueue: providerTaskQueue(workflowInfo().taskQueue, input.account),
  });
  const { reconcileWindow } = proxyActivities<activities.Activities>(reconcileWindowOptions);
  const result = await followUpNonFinal(input);
  const reconciled: ReconcileWindowSummary[] = [];
  for (const range of rangesOfDates(result.dates)) {
    reconciled.push(
      await reconcileWindow({
        ...range,
        account: input.account,
        ...(input.asOf === undefined ? {} : { now: input.asOf }),
      }),
    );
  }
  return { ...result, reconciled };
}
