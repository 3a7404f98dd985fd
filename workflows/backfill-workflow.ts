import {
  ApplicationFailure,
  ChildWorkflowFailure,
  continueAsNew,
  defineQuery,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  AccountProgress,
  BackfillInput,
  BackfillProgress,
  BackfillResult,
  BackfillState,
  WindowResult,
} from './types.ts';
import type * as activities from '../activities/index.ts';
import { activityTuningProblem, reconcileWindowOptions, tunedActivityOptions } from './activity-options.ts';
import { executeWindow } from './execute-window.ts';
import { isAccountName } from '../domain/account-name.ts';
import { MAX_WINDOW_DAYS } from '../domain/sources.ts';
import { checkedWindowInput, type DayWindow, splitWindows } from './windows.ts';
import { BACKFILL_VOLUME_PATCH, checkVolumeOfAccounts } from './volume-check.ts';

/** Query answered by a running (or finished) backfill: windows done and left, rows, failures. */
export const progressQuery = defineQuery<BackfillProgress>('progress');

export const DEFAULT_PARALLELISM = 2;
export const DEFAULT_MAX_WINDOWS_PER_RUN = 100;
/**
 * Backfills started before this change ended as cancelled when their first window's cancellation
 * completed; the others were left running, to be terminated by the parent-close policy.
 */
export const CANCEL_WAITS_PATCH = 'backfill-cancel-waits-for-windows';
/**
 * Backfills started before this change ended with their last window. Now, once every window is
 * loaded, each completed window is reconciled again, so that what a window found does not depend on
 * which windows had been loaded when it was first matched (a return reconciled before its original's
 * window was loaded). See {@link reconcileAgain}.
 */
export const FINAL_RECONCILE_PATCH = 'backfill-final-reconcile';

/** The message a person should read for a failed child window. */
export function childFailureMessage(error: unknown): string {
  // The first ApplicationFailure down the chain says what happened: the window's own summary of its
  // sources, or the typed error of an activity (ChildWorkflowFailure > ActivityFailure > it).
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure) return e.message;
  }
  if (error instanceof ChildWorkflowFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** One child to run: a window, of one account when the backfill runs per account. */
interface Unit extends DayWindow {
  readonly account?: string;
  /** What `state.done` records: the window's `from`, or `account/from`. */
  readonly key: string;
}

/** The children of a backfill: each window, or each window of each account (window-major, so the accounts advance together). */
function unitsOf(windows: DayWindow[], accounts: readonly string[] | undefined): Unit[] {
  if (accounts === undefined) return windows.map((w) => ({ ...w, key: w.from }));
  return windows.flatMap((w) => accounts.map((account) => ({ ...w, account, key: `${account}/${w.from}` })));
}

/**
 * What is wrong with a workflow input's `accounts` (the backfill's, the nightly run's), or null: each
 * name is checked where the input enters, as the command line checks its --account.
 */
export function accountsProblem(accounts: readonly string[] | undefined): string | null {
  if (accounts === undefined) return null;
  if (accounts.length === 0) return 'accounts is empty: name at least one account, or leave it out';
  const bad = accounts.filter((a) => !isAccountName(a));
  if (bad.length > 0) return `accounts ${JSON.stringify(bad)}: a name is 1 to 32 of a-z, 0-9 and -`;
  if (new Set(accounts).size !== accounts.length) return 'accounts names an account twice';
  return null;
}

/** Each account's share of the progress, from the state and the units. */
function accountProgress(units: readonly Unit[], state: BackfillState): AccountProgress[] | undefined {
  if (!state.byAccount) return undefined;
  return Object.entries(state.byAccount).map(([account, totals]) => {
    const total = units.filter((u) => u.account === account).length;
    const failures = state.failures.filter((f) => f.account === account);
    return {
      account,
      ...totals,
      windowsTotal: total,
      windowsFailed: failures.length,
      windowsLeft: total - totals.windowsDone - failures.length,
      failures,
    };
  });
}

/**
 * The final pass of a backfill: every completed window is reconciled again, now that all of them are
 * loaded, one after the other (runs queue on the reconcile lock anyway). A window's first run saw
 * only the windows loaded by then: matching reads rows outside its range (a return's original, a
 * booking's provider row), so the windows finishing in another order left other findings. After this
 * pass the warehouse is what matching finds over all the data, whatever the order; a window whose
 * data nothing changed since its first run reuses that run's matching (reconcile/matching-reuse.ts).
 */
async function reconcileAgain(units: readonly Unit[], input: BackfillInput): Promise<void> {
  const { reconcileWindow } = proxyActivities<activities.Activities>(
    tunedActivityOptions(reconcileWindowOptions, input.activityTuning),
  );
  for (const unit of units) {
    await reconcileWindow({
      from: unit.from,
      to: unit.to,
      ...(unit.account === undefined ? {} : { account: unit.account }),
    });
  }
}

/**
 * Loads and reconciles Eastern days `from`..`to`: splits the range into windows of at most 40 days
 * and runs each as a child window workflow (id derived from the window), `parallelism` at a time.
 * With `accounts`, each window runs once per account (ids include the account; each account's pulls
 * on its own task queue), and progress and failures are kept per account. A window that fails is
 * recorded with its message and the others go on, whatever their account; the backfill then fails at
 * the end naming them. Progress is carried across continue-as-new, which happens after
 * `maxWindowsPerRun` windows or when the server suggests it, once the running windows have finished.
 * Cancelling the backfill cancels its running windows. `activityTuning` goes to every window.
 * Once every window has run, each completed one is reconciled again ({@link reconcileAgain}). At the
 * end, each account's range is checked for low-volume days (workflows/volume-check.ts).
 */
export async function backfillWorkflow(input: BackfillInput): Promise<BackfillResult> {
  const units = checkedUnits(input);
  const state = stateOf(input);
  const finished = new Set([...state.done, ...state.failures.map(unitKey)]);
  const run: BackfillRun = {
    input,
    units,
    state,
    pending: units.filter((u) => !finished.has(u.key)),
    running: new Map<string, Unit>(),
    reconcilingAgain: false,
  };
  setHandler(progressQuery, () => progressOf(run));
  await runWindows(run);
  if (run.pending.length > 0) {
    await continueAsNew<typeof backfillWorkflow>({ ...input, state });
  }
  if (units.length > 1 && patched(FINAL_RECONCILE_PATCH)) {
    run.reconcilingAgain = true;
    await reconcileAgain(
      units.filter((u) => state.done.includes(u.key)),
      input,
    );
    run.reconcilingAgain = false;
  }
  // The whole range at once, once every window has ended: each day is judged against the days
  // before it whatever order the windows finished in.
  const volume = patched(BACKFILL_VOLUME_PATCH)
    ? await checkVolumeOfAccounts({ from: input.from, to: input.to }, input.accounts ?? [undefined])
    : undefined;
  if (state.failures.length > 0) {
    throw ApplicationFailure.nonRetryable(failedMessage(run), 'BackfillFailed');
  }
  return {
    from: input.from,
    to: input.to,
    windows: units.length,
    rowsRead: state.rowsRead,
    rowsLoaded: state.rowsLoaded,
    rowsRejected: state.rowsRejected,
    runs: state.runs,
    ...progressOfAccounts(run),
    ...(volume === undefined ? {} : { volume }),
  };
}

/** One run of a backfill (until it ends or continues as new): its units, where they stand, its state. */
interface BackfillRun {
  readonly input: BackfillInput;
  readonly units: readonly Unit[];
  /** Carried across continue-as-new. */
  readonly state: BackfillState;
  /** Units not started yet, in order. */
  readonly pending: Unit[];
  readonly running: Map<string, Unit>;
  reconcilingAgain: boolean;
}

/** The units of the input, once its range, tuning and accounts are checked (refused here, once, rather than by every window). */
function checkedUnits(input: BackfillInput): Unit[] {
  const windows = checkedWindowInput(() =>
    splitWindows(input.from, input.to, input.windowDays ?? MAX_WINDOW_DAYS),
  );
  const tuningProblem = activityTuningProblem(input.activityTuning);
  if (tuningProblem) throw ApplicationFailure.nonRetryable(tuningProblem, 'InvalidActivityTuning');
  const accountsError = accountsProblem(input.accounts);
  if (accountsError) throw ApplicationFailure.nonRetryable(accountsError, 'InvalidAccounts');
  return unitsOf(windows, input.accounts);
}

/** The state carried from the run before, or a new one. */
function stateOf(input: BackfillInput): BackfillState {
  if (input.state) return { ...input.state, runs: input.state.runs + 1 };
  return {
    done: [],
    failures: [],
    rowsRead: 0,
    rowsLoaded: 0,
    rowsRejected: 0,
    startedAt: workflowInfo().startTime.toISOString(),
    runs: 1,
    ...(input.accounts
      ? {
          byAccount: Object.fromEntries(
            input.accounts.map((a) => [a, { windowsDone: 0, rowsRead: 0, rowsLoaded: 0, rowsRejected: 0 }]),
          ),
        }
      : {}),
  };
}

/** A unit's key in `state.done`, from a unit or a recorded failure. */
function unitKey(w: { from: string; account?: string }): string {
  return w.account === undefined ? w.from : `${w.account}/${w.from}`;
}

function progressOfAccounts(run: BackfillRun): { accounts?: AccountProgress[] } {
  const accounts = accountProgress(run.units, run.state);
  return accounts ? { accounts } : {};
}

/** The answer to {@link progressQuery}. */
function progressOf(run: BackfillRun): BackfillProgress {
  const { input, units, state, pending, running } = run;
  return {
    from: input.from,
    to: input.to,
    windowsTotal: units.length,
    windowsDone: state.done.length,
    windowsFailed: state.failures.length,
    windowsLeft: units.length - state.done.length - state.failures.length,
    rowsRead: state.rowsRead,
    rowsLoaded: state.rowsLoaded,
    rowsRejected: state.rowsRejected,
    failures: state.failures,
    running: [...running.values()].map(({ key: _key, ...window }) => window),
    startedAt: state.startedAt,
    runs: state.runs,
    finished: pending.length === 0 && running.size === 0 && !run.reconcilingAgain,
    ...progressOfAccounts(run),
  };
}

/**
 * Starts the pending units `parallelism` at a time until none is left, `maxWindowsPerRun` have
 * started in this run, or the server suggests continuing as new; returns once the started ones ended.
 */
async function runWindows(run: BackfillRun): Promise<void> {
  const { input, pending } = run;
  const parallelism = Math.max(1, Math.floor(input.parallelism ?? DEFAULT_PARALLELISM));
  const maxWindowsPerRun = Math.max(1, Math.floor(input.maxWindowsPerRun ?? DEFAULT_MAX_WINDOWS_PER_RUN));
  const inFlight = new Set<Promise<void>>();
  let startedThisRun = 0;
  for (;;) {
    while (
      inFlight.size < parallelism &&
      pending.length > 0 &&
      startedThisRun < maxWindowsPerRun &&
      !workflowInfo().continueAsNewSuggested
    ) {
      const unit = pending.shift() as Unit;
      startedThisRun++;
      const promise: Promise<void> = runWindow(run, unit).finally(() => inFlight.delete(promise));
      inFlight.add(promise);
    }
    if (inFlight.size === 0) break;
    // Wakes when any window ends; a cancellation rejects here and ends the backfill as cancelled,
    // once every running window has ended cancelled too: a backfill that says cancelled has no
    // window still writing, and none is left to be terminated half-way by the parent-close policy.
    try {
      await Promise.race(inFlight);
    } catch (error) {
      if (isCancellation(error) && patched(CANCEL_WAITS_PATCH)) await Promise.allSettled(inFlight);
      throw error;
    }
  }
}

/** Runs one unit as a child window workflow; its rows, or its failure, go into the state. */
async function runWindow(run: BackfillRun, unit: Unit): Promise<void> {
  const { input, state } = run;
  run.running.set(unit.key, unit);
  const account = unit.account === undefined ? {} : { account: unit.account };
  try {
    // Optional fields only when set: without them the child input is what it always was.
    const result: WindowResult = await executeWindow({
      from: unit.from,
      to: unit.to,
      ...account,
      ...(input.sources ? { sources: input.sources } : {}),
      ...(input.activityTuning ? { activityTuning: input.activityTuning } : {}),
    });
    state.done.push(unit.key);
    state.rowsRead += result.rowsRead;
    state.rowsLoaded += result.rowsLoaded;
    state.rowsRejected += result.rowsRejected;
    const totals = unit.account === undefined ? undefined : state.byAccount?.[unit.account];
    if (totals) {
      totals.windowsDone++;
      totals.rowsRead += result.rowsRead;
      totals.rowsLoaded += result.rowsLoaded;
      totals.rowsRejected += result.rowsRejected;
    }
  } catch (error) {
    if (isCancellation(error)) throw error;
    state.failures.push({ from: unit.from, to: unit.to, ...account, message: childFailureMessage(error) });
  } finally {
    run.running.delete(unit.key);
  }
}

/** Why a backfill with failed windows fails: how many, of which accounts, and each window's message. */
function failedMessage({ input, units, state }: BackfillRun): string {
  const accounts = accountProgress(units, state);
  const failedAccounts = accounts?.filter((a) => a.windowsFailed > 0);
  return (
    `backfill ${input.from}..${input.to}: ${state.failures.length} of ${units.length} windows failed` +
    (failedAccounts && accounts
      ? ` (account${failedAccounts.length > 1 ? 's' : ''} ${failedAccounts.map((a) => a.account).join(', ')}; ` +
        `${accounts.length - failedAccounts.length} of ${accounts.length} accounts completed)`
      : '') +
    '; ' +
    state.failures
      .map((f) => `${f.account === undefined ? '' : `${f.account} `}${f.from}..${f.to}: ${f.message}`)
      .join(' | ')
  );
}
