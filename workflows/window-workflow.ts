import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type * as activities from '../activities/index.ts';
import { SOURCES } from '../domain/records.ts';
import {
  activityTuningProblem,
  pullSourceOptions,
  reconcileWindowOptions,
  sendAlertOptions,
  tunedActivityOptions,
} from './activity-options.ts';
import type { PullSummary } from '../domain/load-summary.ts';
import type { AlertInput, ReconcileWindowSummary, WindowInput, WindowResult } from './types.ts';
import { providerTaskQueue } from './task-queues.ts';
import { unlessCancelled } from './unless-cancelled.ts';
import { daysInclusive } from '../domain/time/calendar.ts';
import { MAX_WINDOW_DAYS } from '../domain/sources.ts';

/** The message a person should read for a failed activity: the typed error's, not the wrapper's. */
export function failureMessage(error: unknown): string {
  if (error instanceof ActivityFailure && error.cause) return error.cause.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Patch id of the alerts: window runs recorded before them (test/histories/window.json) replay
 * without the alert activity; new runs record the marker and send a summary after the reconcile
 * run, or a failure alert when the window fails.
 */
export const ALERTS_PATCH = 'window-alerts';

/** The alert of a finished window: ids and counts from the reconcile summary (no secret, no data). */
export function summaryAlert(input: WindowInput, reconcile: ReconcileWindowSummary): AlertInput {
  // Histories recorded before the run's counts were typed carry them flat only (`lifecycle.opened`).
  const lifecycle = reconcile.run?.lifecycle;
  const count = (key: 'opened' | 'reopened' | 'resolved') =>
    (lifecycle ? lifecycle[key] : reconcile.counts[`lifecycle.${key}`]) ?? 0;
  return {
    type: 'summary',
    ...alertHead(input),
    reconcileRunId: reconcile.run ? reconcile.run.runId : (reconcile.counts['runId'] ?? null),
    opened: count('opened'),
    reopened: count('reopened'),
    resolved: count('resolved'),
    discrepancies: reconcile.discrepancies ?? [],
  };
}

/** What every alert of a window starts with: the window, its account and the workflow that ran it. */
function alertHead(input: WindowInput) {
  const info = workflowInfo();
  return {
    from: input.from,
    to: input.to,
    ...accountOf(input),
    workflowId: info.workflowId,
    workflowRunId: info.runId,
    startedBy: info.parent?.workflowId ?? null,
  };
}

/** `{ account }` when the window has one: inputs of runs recorded before accounts stay as they were. */
function accountOf(input: WindowInput): { account?: string } {
  return input.account === undefined ? {} : { account: input.account };
}

/**
 * Sends an alert through the alert activity (which retries with backoff); when it still fails, the
 * window keeps its own outcome: an alert that cannot be delivered never fails a reconciliation.
 */
async function sendAlertQuietly(alert: AlertInput): Promise<void> {
  const { sendAlert } = proxyActivities<activities.Activities>(sendAlertOptions);
  await unlessCancelled(
    () => sendAlert(alert),
    () => undefined,
  );
}

/**
 * One window of at most 40 Eastern days: pulls and loads every source in parallel (each activity
 * streams the provider's answer into Postgres; only counts come back), then reconciles the window.
 * When a source fails for good, the window fails with a message naming each failed source, after the
 * other pulls have finished, and matching is not run on incomplete data. `activityTuning` (from the
 * input, so replay sees the same) overrides the heartbeat timeout of its activities.
 * Then the alert activity posts the run's summary to the alert webhooks, or, when the window failed
 * after its activities' retries, a failure alert (patch {@link ALERTS_PATCH}).
 */
export async function windowWorkflow(input: WindowInput): Promise<WindowResult> {
  const days = daysInclusive(input.from, input.to);
  if (days > MAX_WINDOW_DAYS) {
    throw ApplicationFailure.nonRetryable(
      `window ${input.from}..${input.to} spans ${days} days; the limit is ${MAX_WINDOW_DAYS}: split it (the backfill does)`,
      'WindowTooLarge',
    );
  }
  const tuningProblem = activityTuningProblem(input.activityTuning);
  if (tuningProblem) throw ApplicationFailure.nonRetryable(tuningProblem, 'InvalidActivityTuning');
  let result: WindowResult;
  try {
    result = await loadAndReconcile(input);
  } catch (error) {
    if (!isCancellation(error) && patched(ALERTS_PATCH)) {
      await sendAlertQuietly({ type: 'failure', ...alertHead(input), message: failureMessage(error) });
    }
    throw error;
  }
  if (patched(ALERTS_PATCH)) await sendAlertQuietly(summaryAlert(input, result.reconcile));
  return result;
}

async function loadAndReconcile(input: WindowInput): Promise<WindowResult> {
  const pullOptions = tunedActivityOptions(pullSourceOptions, input.activityTuning);
  // An account's pulls go through its own queue, whose rate limit is that account's provider quota.
  const { pullSource } = proxyActivities<activities.Activities>(
    input.account === undefined
      ? pullOptions
      : { ...pullOptions, taskQueue: providerTaskQueue(workflowInfo().taskQueue, input.account) },
  );
  const { reconcileWindow } = proxyActivities<activities.Activities>(
    tunedActivityOptions(reconcileWindowOptions, input.activityTuning),
  );
  const sources = input.sources ?? SOURCES;
  const settled = await Promise.allSettled(
    sources.map((source) => pullSource({ source, from: input.from, to: input.to, ...accountOf(input) })),
  );
  // A cancelled window stops as cancelled, not as a failure of its sources.
  const cancelled = settled.find((o) => o.status === 'rejected' && isCancellation(o.reason));
  if (cancelled?.status === 'rejected') throw cancelled.reason;
  const pulls: PullSummary[] = [];
  const failed: string[] = [];
  settled.forEach((outcome, i) => {
    if (outcome.status === 'fulfilled') pulls.push(outcome.value);
    else failed.push(`${sources[i]}: ${failureMessage(outcome.reason)}`);
  });
  if (failed.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `${input.account === undefined ? '' : `account ${input.account}: `}window ${input.from}..${input.to}: ${failed.length} of ${sources.length} sources failed; ${failed.join('; ')}`,
      'WindowFailed',
    );
  }
  const reconcile = await reconcileWindow({
    from: input.from,
    to: input.to,
    ...accountOf(input),
    ...(input.asOf === undefined ? {} : { now: input.asOf }),
  });
  const sum = (key: 'rowsRead' | 'rowsLoaded' | 'rowsRejected') =>
    pulls.reduce((total, p) => total + p[key], 0);
  return {
    from: input.from,
    to: input.to,
    ...accountOf(input),
    rowsRead: sum('rowsRead'),
    rowsLoaded: sum('rowsLoaded'),
    rowsRejected: sum('rowsRejected'),
    pulls,
    reconcile,
  };
}
