import type { PullSummary } from '../domain/load-summary.ts';
import type { Source } from '../domain/records.ts';
import type {
  DayWindow,
  FollowUpResult,
  ReconcileWindowSummary,
  RetentionResult,
  VolumeOutcome,
} from '../domain/run-summary.ts';

export type {
  AlertInput,
  AlertResult,
  DiscrepancyTotal,
  FollowUpInput,
  FollowUpResult,
  PullSourceInput,
  ReconcileWindowSummary,
  RetentionResult,
  RunSummaryAlert,
  VolumeCheckFailure,
  VolumeCheckInput,
  VolumeCheckResult,
  VolumeFlagSummary,
  VolumeOutcome,
  WindowFailureAlert,
} from '../domain/run-summary.ts';

/**
 * Inputs and results of the workflows and activities. They travel through Temporal payloads and
 * histories, so they hold dates, counts and messages only: never report data, never a secret.
 */

/**
 * Per-run overrides of the activity presets (workflows/activity-options.ts), carried in the workflow
 * input so that the workflow stays deterministic and a replay schedules the same options. Absent in
 * production: the presets apply.
 */
export interface ActivityTuning {
  /**
   * Heartbeat timeout of every activity of a window, whole seconds 1..3600 (presets: pull 30 s,
   * matching 2 min): how long after a worker dies its running activities are retried elsewhere.
   * Below a few seconds, a worker whose event loop is busy may miss a heartbeat and cause a retry.
   */
  readonly heartbeatTimeoutSeconds?: number;
}

export interface WindowInput extends DayWindow {
  /**
   * The provider account of the window: its pulls run on the account's own task queue (its rate
   * limit) with its credentials, and matching covers its rows. Absent: the runs recorded before
   * accounts existed, which pull on the workflow's queue for the account `default`.
   */
  readonly account?: string;
  /** Sources to pull; all five when omitted. */
  readonly sources?: readonly Source[];
  /** Overrides of the activity presets; absent in production. */
  readonly activityTuning?: ActivityTuning;
  /** The instant the window's reconcile run judges grace periods at (ISO); absent: now. */
  readonly asOf?: string;
}

export interface WindowResult extends DayWindow {
  readonly account?: string;
  readonly rowsRead: number;
  readonly rowsLoaded: number;
  readonly rowsRejected: number;
  readonly pulls: readonly PullSummary[];
  readonly reconcile: ReconcileWindowSummary;
}

export interface WindowFailure extends DayWindow {
  /** The window's account, when the backfill runs per account. */
  readonly account?: string;
  readonly message: string;
}

/** Rows and windows of one account in a backfill (carried across continue-as-new). */
export interface AccountTotals {
  windowsDone: number;
  rowsRead: number;
  rowsLoaded: number;
  rowsRejected: number;
}

/** Progress of one account in a backfill: its share of {@link BackfillProgress}. */
export interface AccountProgress extends AccountTotals {
  readonly account: string;
  readonly windowsTotal: number;
  readonly windowsFailed: number;
  readonly windowsLeft: number;
  readonly failures: readonly WindowFailure[];
}

/** Progress of a backfill, carried across continue-as-new (small: dates and counts). */
export interface BackfillState {
  /** Key of each window that completed: its `from`, or `account/from` when the backfill runs per account. */
  readonly done: string[];
  readonly failures: WindowFailure[];
  rowsRead: number;
  rowsLoaded: number;
  rowsRejected: number;
  /** When the first run of this backfill started (ISO, UTC). */
  readonly startedAt: string;
  /** Runs of this workflow id so far (1 + continue-as-new count). */
  runs: number;
  /** Per account, when the backfill runs per account. */
  readonly byAccount?: Record<string, AccountTotals>;
}

export interface BackfillInput {
  readonly from: string;
  readonly to: string;
  /** Windows loaded at the same time (default 2). */
  readonly parallelism?: number;
  /** Days per window, 1..40 (default 40). */
  readonly windowDays?: number;
  /** Windows started by one run before it continues as new (default 100), which keeps histories small. */
  readonly maxWindowsPerRun?: number;
  readonly sources?: readonly Source[];
  /**
   * The provider accounts to load, each window once per account (child ids include the account);
   * one account's failures never stop the others. Absent: one window per range, for the account
   * `default`, as runs recorded before accounts existed.
   */
  readonly accounts?: readonly string[];
  /** Overrides of the activity presets, passed to every window; absent in production. */
  readonly activityTuning?: ActivityTuning;
  /** Carried by continue-as-new; absent on the first run. */
  readonly state?: BackfillState;
}

/** Answer of the backfill's `progress` query. */
export interface BackfillProgress {
  readonly from: string;
  readonly to: string;
  readonly windowsTotal: number;
  readonly windowsDone: number;
  readonly windowsFailed: number;
  readonly windowsLeft: number;
  readonly rowsRead: number;
  readonly rowsLoaded: number;
  readonly rowsRejected: number;
  readonly failures: readonly WindowFailure[];
  readonly running: readonly (DayWindow & { readonly account?: string })[];
  /** Per account, when the backfill runs per account. */
  readonly accounts?: readonly AccountProgress[];
  readonly startedAt: string;
  readonly runs: number;
  readonly finished: boolean;
}

export interface BackfillResult {
  readonly from: string;
  readonly to: string;
  readonly windows: number;
  readonly rowsRead: number;
  readonly rowsLoaded: number;
  readonly rowsRejected: number;
  readonly runs: number;
  readonly accounts?: readonly AccountProgress[];
  /** The low-volume check of each account over the range; absent in runs recorded before it. */
  readonly volume?: readonly VolumeOutcome[];
}

/** The follow-up of one account in a nightly result: what it learnt and the reconcile runs after it. */
export interface NightlyFollowUp extends FollowUpResult {
  readonly reconciled: readonly ReconcileWindowSummary[];
}

export interface NightlyInput {
  /** Days before the scheduled day also covered (default 3): statuses change and returns come late. */
  readonly lookbackDays?: number;
  /** Eastern day to cover up to; by default the Eastern day of the schedule's scheduled time. */
  readonly day?: string;
  readonly sources?: readonly Source[];
  /** Only these provider accounts (`recon nightly --account`); absent: every account of the workers. */
  readonly accounts?: readonly string[];
  /**
   * The instant grace periods, stuck_pending and the follow-up are judged at (ISO): `recon nightly
   * --date` of a past day in tests. Absent: when each step runs.
   */
  readonly asOf?: string;
}

export interface NightlyResult extends DayWindow {
  /** The scheduled time the run stands for (ISO, UTC), or null when started outside a schedule. */
  readonly scheduledFor: string | null;
  readonly rowsLoaded: number;
  readonly windows: readonly WindowResult[];
  /**
   * What the retention step cleared after the windows; null when RECON_RAW_RETENTION_DAYS is unset.
   * Absent in runs recorded before the step existed.
   */
  readonly retention?: RetentionResult | null;
  /** The low-volume check of each account after the windows; absent in runs recorded before it. */
  readonly volume?: readonly VolumeOutcome[];
  /** Per account, the follow-up of non-final transactions; absent in runs recorded before it. */
  readonly followUp?: readonly NightlyFollowUp[];
}
