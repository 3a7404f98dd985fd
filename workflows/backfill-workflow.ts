import {
  ApplicationFailure,
  ChildWorkflowFailure,
  continueAsNew,
  defineQuery,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  BackfillInput,
  BackfillProgress,
  BackfillResult,
  BackfillState,
  WindowResult,
} from './types.ts';
import { activityTuningProblem } from './activity-options.ts';
import { executeWindow } from './execute-window.ts';
import { MAX_WINDOW_DAYS } from '../domain/sources.ts';
import { type DayWindow, splitWindows } from './windows.ts';

/** Query answered by a running (or finished) backfill: windows done and left, rows, failures. */
export const progressQuery = defineQuery<BackfillProgress>('progress');

export const DEFAULT_PARALLELISM = 2;
export const DEFAULT_MAX_WINDOWS_PER_RUN = 100;

function childFailureMessage(error: unknown): string {
  // The first ApplicationFailure down the chain says what happened: the window's own summary of its
  // sources, or the typed error of an activity (ChildWorkflowFailure > ActivityFailure > it).
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure) return e.message;
  }
  if (error instanceof ChildWorkflowFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Loads and reconciles Eastern days `from`..`to`: splits the range into windows of at most 40 days
 * and runs each as a child window workflow (id derived from the window), `parallelism` at a time. A
 * window that fails is recorded with its message and the others go on; the backfill then fails at
 * the end naming them. Progress is carried across continue-as-new, which happens after
 * `maxWindowsPerRun` windows or when the server suggests it, once the running windows have finished.
 * Cancelling the backfill cancels its running windows. `activityTuning` goes to every window.
 */
export async function backfillWorkflow(input: BackfillInput): Promise<BackfillResult> {
  const windowDays = input.windowDays ?? MAX_WINDOW_DAYS;
  const parallelism = Math.max(1, Math.floor(input.parallelism ?? DEFAULT_PARALLELISM));
  const maxWindowsPerRun = Math.max(1, Math.floor(input.maxWindowsPerRun ?? DEFAULT_MAX_WINDOWS_PER_RUN));
  let windows: DayWindow[];
  try {
    windows = splitWindows(input.from, input.to, windowDays);
  } catch (error) {
    throw ApplicationFailure.nonRetryable((error as Error).message, 'InvalidRange');
  }
  // Refused here, once, rather than by every window.
  const tuningProblem = activityTuningProblem(input.activityTuning);
  if (tuningProblem) throw ApplicationFailure.nonRetryable(tuningProblem, 'InvalidActivityTuning');
  const state: BackfillState = input.state
    ? { ...input.state, runs: input.state.runs + 1 }
    : {
        done: [],
        failures: [],
        rowsRead: 0,
        rowsLoaded: 0,
        rowsRejected: 0,
        startedAt: workflowInfo().startTime.toISOString(),
        runs: 1,
      };
  const finished = new Set([...state.done, ...state.failures.map((f) => f.from)]);
  const pending = windows.filter((w) => !finished.has(w.from));
  const running = new Map<string, DayWindow>();

  setHandler(progressQuery, () => ({
    from: input.from,
    to: input.to,
    windowsTotal: windows.length,
    windowsDone: state.done.length,
    windowsFailed: state.failures.length,
    windowsLeft: windows.length - state.done.length - state.failures.length,
    rowsRead: state.rowsRead,
    rowsLoaded: state.rowsLoaded,
    rowsRejected: state.rowsRejected,
    failures: state.failures,
    running: [...running.values()],
    startedAt: state.startedAt,
    runs: state.runs,
    finished: pending.length === 0 && running.size === 0,
  }));

  async function runWindow(window: DayWindow): Promise<void> {
    running.set(window.from, window);
    try {
      // Optional fields only when set: without them the child input is what it always was.
      const result: WindowResult = await executeWindow({
        from: window.from,
        to: window.to,
        ...(input.sources ? { sources: input.sources } : {}),
        ...(input.activityTuning ? { activityTuning: input.activityTuning } : {}),
      });
      state.done.push(window.from);
      state.rowsRead += result.rowsRead;
      state.rowsLoaded += result.rowsLoaded;
      state.rowsRejected += result.rowsRejected;
    } catch (error) {
      if (isCancellation(error)) throw error;
      state.failures.push({ from: window.from, to: window.to, message: childFailureMessage(error) });
    } finally {
      running.delete(window.from);
    }
  }

  const inFlight = new Set<Promise<void>>();
  let startedThisRun = 0;
  for (;;) {
    while (
      inFlight.size < parallelism &&
      pending.length > 0 &&
      startedThisRun < maxWindowsPerRun &&
      !workflowInfo().continueAsNewSuggested
    ) {
      const window = pending.shift() as DayWindow;
      startedThisRun++;
      const promise: Promise<void> = runWindow(window).finally(() => inFlight.delete(promise));
      inFlight.add(promise);
    }
    if (inFlight.size === 0) break;
    // Wakes when any window ends; a cancellation rejects here and ends the backfill as cancelled.
    await Promise.race(inFlight);
  }
  if (pending.length > 0) {
    await continueAsNew<typeof backfillWorkflow>({ ...input, state });
  }
  if (state.failures.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `backfill ${input.from}..${input.to}: ${state.failures.length} of ${windows.length} windows failed; ` +
        state.failures.map((f) => `${f.from}..${f.to}: ${f.message}`).join(' | '),
      'BackfillFailed',
    );
  }
  return {
    from: input.from,
    to: input.to,
    windows: windows.length,
    rowsRead: state.rowsRead,
    rowsLoaded: state.rowsLoaded,
    rowsRejected: state.rowsRejected,
    runs: state.runs,
  };
}
