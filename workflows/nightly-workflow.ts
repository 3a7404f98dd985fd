import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { ApplicationFailure, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from '../activities/index.ts';
import { clearPersonalDataOptions } from './activity-options.ts';
import type { NightlyInput, NightlyResult, RetentionResult, WindowResult } from './types.ts';
import { executeWindow } from './execute-window.ts';
import { addDays, isValidDate } from '../domain/time/calendar.ts';
import { easternDateOfMs } from '../domain/time/eastern.ts';
import { splitWindows } from './windows.ts';

export const DEFAULT_LOOKBACK_DAYS = 3;

/**
 * Patch id of the retention step: runs recorded before it (test/histories/nightly.json) replay
 * without the activity call; new runs record the marker and call it.
 */
export const RETENTION_PATCH = 'nightly-raw-retention';

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
 * The nightly run: pulls, loads and reconciles the scheduled Eastern day and the `lookbackDays` days
 * before it (returns arrive days later and statuses change). The day comes from the schedule's own
 * scheduled time (TemporalScheduledStartTime), not the clock when the run happens, so a catch-up or a
 * schedule backfill covers the day it stands for. Windows run one after another as child window
 * workflows with ids derived from the window, so a nightly never loads a window a backfill is loading.
 * Then the retention activity clears personal data older than the worker's RECON_RAW_RETENTION_DAYS
 * (nothing when unset).
 */
export async function nightlyWorkflow(input: NightlyInput = {}): Promise<NightlyResult> {
  const lookback = input.lookbackDays ?? DEFAULT_LOOKBACK_DAYS;
  if (!Number.isInteger(lookback) || lookback < 0 || lookback > 366) {
    throw ApplicationFailure.nonRetryable(
      `lookbackDays ${lookback} is not valid: use a whole number of days from 0 to 366`,
      'InvalidLookback',
    );
  }
  if (input.day !== undefined && !isValidDate(input.day)) {
    throw ApplicationFailure.nonRetryable(
      `day ${JSON.stringify(input.day)} is not a date: write it YYYY-MM-DD`,
      'InvalidDay',
    );
  }
  const { instant, fromSchedule } = scheduledFor();
  const to = input.day ?? easternDateOfMs(instant.getTime());
  const from = addDays(to, -lookback);
  const windows: WindowResult[] = [];
  for (const window of splitWindows(from, to)) {
    windows.push(await executeWindow({ ...window, ...(input.sources ? { sources: input.sources } : {}) }));
  }
  let retention: RetentionResult | null | undefined;
  if (patched(RETENTION_PATCH)) {
    const { clearPersonalData } = proxyActivities<activities.Activities>(clearPersonalDataOptions);
    retention = await clearPersonalData();
  }
  return {
    from,
    to,
    scheduledFor: fromSchedule ? instant.toISOString() : null,
    rowsLoaded: windows.reduce((total, w) => total + w.rowsLoaded, 0),
    windows,
    ...(retention === undefined ? {} : { retention }),
  };
}
