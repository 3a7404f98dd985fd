import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities/index.ts';
import { checkVolumeOptions } from './activity-options.ts';
import { failureMessage } from './window-workflow.ts';
import type { VolumeOutcome } from './types.ts';
import { unlessCancelled } from './unless-cancelled.ts';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import type { DayWindow } from './windows.ts';

/**
 * Patch ids of the low-volume check: runs recorded before it (test/histories) replay without the
 * activity; new runs record the marker and check each account's range after the windows.
 */
export const NIGHTLY_VOLUME_PATCH = 'nightly-volume-check';
export const BACKFILL_VOLUME_PATCH = 'backfill-volume-check';

/**
 * Runs the low-volume activity for each account over `window` (docs/operations.md "Low-volume
 * days"), the accounts side by side. A check that fails after its retries is reported in the outcome
 * and never fails the run: the data it judges is loaded and reconciled either way.
 */
export async function checkVolumeOfAccounts(
  window: DayWindow,
  accounts: readonly (string | undefined)[],
): Promise<VolumeOutcome[]> {
  const { checkVolume } = proxyActivities<activities.Activities>(checkVolumeOptions);
  return Promise.all(
    accounts.map(async (account): Promise<VolumeOutcome> => {
      const input = { ...window, ...(account === undefined ? {} : { account }) };
      return unlessCancelled<VolumeOutcome>(
        () => checkVolume(input),
        (error) => ({ ...window, account: account ?? DEFAULT_ACCOUNT, error: failureMessage(error) }),
      );
    }),
  );
}
