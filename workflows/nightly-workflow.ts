import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { ApplicationFailure, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities/index.ts';
import { clearPersonalDataOptions, listAccountsOptions } from './activity-options.ts';
import type {
  NightlyFollowUp,
  NightlyInput,
  NightlyResult,
  RetentionResult,
  VolumeOutcome,
  WindowFailure,
  WindowResult,
} from './types.ts';
import { FOLLOW_UP_PATCH, followUpAccount } from './follow-up-step.ts';
import { accountsProblem, childFailureMessage } from './backfill-workflow.ts';
import { executeWindow } from './execute-window.ts';
import { unlessCancelled } from './unless-cancelled.ts';
import { addDays } from '../domain/time/calendar.ts';
import { checkDateWindow } from '../domain/time/date-window.ts';
import { easternDateOfMs } from '../domain/time/eastern.ts';
import { checkedWindowInput, splitWindows } from './windows.ts';
import { checkVolumeOfAccounts, NIGHTLY_VOLUME_PATCH } from './volume-check.ts';

export const DEFAULT_LOOKBACK_DAYS = 3;

/**
 * Patch id of the retention step: runs recorded before it (test/histories/nightly.json) replay
 * without the activity call; new runs record the marker and call it.
 */
export const RETENTION_PATCH = 'nightly-raw-retention';

/**
 * Patch id of the per-account run: runs recorded before it (test/histories/nightly.json) replay
 * with windows of no account; new runs ask the worker for its accounts and run each account's
 * windows as their own children.
 */
export const ACCOUNTS_PATCH = 'nightly-accounts';

/** Set by the server on every workflow a Schedule starts: the time the action stands for. */
const scheduledStartTime = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

/** The instant this run stands for: the schedule's scheduled time, else the run's own start time. */
function scheduledFor(): { instant: Date; fromSchedule: boolean } {
  const info = workflowInfo();
  const scheduled = info.typedSearchAttributes.get(scheduledStartTime);
  if (scheduled) return { instant: scheduled, fromSchedule: true };
  return { instant: info.runStartTime, fromSchedule: false };
}

/**
 * Checks the input before anything runs (each problem fails the run, not retried: `InvalidLookback`,
 * `InvalidDateWindow`, `InvalidAsOf`, and `InvalidAccounts` as the backfill's) and gives the look-back.
 */
function checkedLookback(input: NightlyInput): number {
  const lookback = input.lookbackDays ?? DEFAULT_LOOKBACK_DAYS;
  if (!Number.isInteger(lookback) || lookback < 0 || lookback > 366) {
    throw ApplicationFailure.nonRetryable(
      `lookbackDays ${lookback} is not valid: use a whole number of days from 0 to 366`,
      'InvalidLookback',
    );
  }
  const day = input.day;
  if (day !== undefined) {
    checkedWindowInput(() =>
      checkDateWindow(day, day, () => `day ${JSON.stringify(day)} is not a date: write it YYYY-MM-DD`),
    );
  }
  if (input.asOf !== undefined && Number.isNaN(Date.parse(input.asOf))) {
    throw ApplicationFailure.nonRetryable(
      `asOf ${JSON.stringify(input.asOf)} is not an instant: write it as ISO 8601, e.g. 2026-03-10T06:00:00Z`,
      'InvalidAsOf',
    );
  }
  const accountsError = accountsProblem(input.accounts);
  if (accountsError) throw ApplicationFailure.nonRetryable(accountsError, 'InvalidAccounts');
  return lookback;
}

/**
 * The nightly run: pulls, loads and reconciles the scheduled Eastern day and the `lookbackDays` days
 * before it (returns arrive days later and statuses change). The day comes from the schedule's own
 * scheduled time (TemporalScheduledStartTime), not the clock when the run happens, so a catch-up or a
 * schedule backfill covers the day it stands for. Windows run one after another as child window
 * workflows with ids derived from the window, so a nightly never loads a window a backfill is loading.
 * After its windows, each account follows its non-final transactions older than the windows until
 * the provider reports them final (workflows/follow-up-step.ts, patch {@link FOLLOW_UP_PATCH}), and
 * the days that changed are reconciled again. Then each account's days are checked for low volume
 * (workflows/volume-check.ts), and the retention activity clears personal data older than the
 * worker's RECON_RAW_RETENTION_DAYS (nothing when unset).
 */
export async function nightlyWorkflow(input: NightlyInput = {}): Promise<NightlyResult> {
  const lookback = checkedLookback(input);
  const { instant, fromSchedule } = scheduledFor();
  const to = input.day ?? easternDateOfMs(instant.getTime());
  const from = addDays(to, -lookback);
  const windows: WindowResult[] = [];
  const failedAccounts: WindowFailure[] = [];
  const followUps: NightlyFollowUp[] = [];
  let followUp = false;
  const asOf = input.asOf === undefined ? {} : { asOf: input.asOf };
  const sources = input.sources ? { sources: input.sources } : {};
  let volume: VolumeOutcome[] | undefined;
  if (patched(ACCOUNTS_PATCH)) {
    followUp = patched(FOLLOW_UP_PATCH);
    const { listAccounts } = proxyActivities<activities.Activities>(listAccountsOptions);
    const accounts = input.accounts ?? (await listAccounts());
    // Accounts side by side, each its windows in order: one account's outage never stops another.
    const outcomes = await Promise.allSettled(
      accounts.map(async (account) => {
        const done: WindowResult[] = [];
        for (const window of splitWindows(from, to)) {
          const result = await unlessCancelled(
            () => executeWindow({ ...window, account, ...sources, ...asOf }),
            (error) => {
              failedAccounts.push({ ...window, account, message: childFailureMessage(error) });
              return null;
            },
          );
          if (result === null) return done;
          done.push(result);
        }
        // Every non-final transaction older than the windows, followed until the provider says final.
        if (followUp) {
          await unlessCancelled(
            async () => {
              followUps.push(await followUpAccount({ account, day: to, before: from, ...asOf }));
            },
            (error) => {
              failedAccounts.push({ from, to, account, message: `follow-up: ${childFailureMessage(error)}` });
            },
          );
        }
        return done;
      }),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') throw outcome.reason;
      windows.push(...outcome.value);
    }
    // Days that loaded nothing, or far less than usual, are flagged and alerted on.
    if (patched(NIGHTLY_VOLUME_PATCH)) volume = await checkVolumeOfAccounts({ from, to }, accounts);
  } else {
    for (const window of splitWindows(from, to)) {
      windows.push(await executeWindow({ ...window, ...sources, ...asOf }));
    }
  }
  let retention: RetentionResult | null | undefined;
  if (patched(RETENTION_PATCH)) {
    const { clearPersonalData } = proxyActivities<activities.Activities>(clearPersonalDataOptions);
    retention = await clearPersonalData();
  }
  if (failedAccounts.length > 0) {
    // After the other accounts and the retention step: the run fails so the schedule shows it.
    throw ApplicationFailure.nonRetryable(
      `nightly ${from}..${to}: ${failedAccounts.length} account(s) failed, the others completed; ` +
        failedAccounts.map((f) => `${f.account}: ${f.message}`).join(' | '),
      'NightlyAccountsFailed',
    );
  }
  return {
    from,
    to,
    scheduledFor: fromSchedule ? instant.toISOString() : null,
    rowsLoaded: windows.reduce((total, w) => total + w.rowsLoaded, 0),
    windows,
    ...(retention === undefined ? {} : { retention }),
    ...(volume === undefined ? {} : { volume }),
    ...(followUp ? { followUp: followUps.sort((a, b) => (a.account < b.account ? -1 : 1)) } : {}),
  };
}
