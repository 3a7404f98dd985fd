/**
 * What crosses the boundary between the stages, the activities, the workflows and the alerts: the
 * activities' inputs and answers, the summary of a reconcile run and the alerts sent about windows. They travel through
 * Temporal payloads and histories, so they hold dates, ids, counts and money with its currency only:
 * never report data, never a secret.
 */
import type { Source } from './records.ts';

/** A window of Eastern days, both inclusive, YYYY-MM-DD. */
export interface DayWindow {
  readonly from: string;
  readonly to: string;
}

/** Discrepancies of one kind in one currency: how many, and the money they concern in that currency. */
export interface DiscrepancyTotal {
  readonly kind: string;
  /** ISO 4217 code; null for a discrepancy recorded without a currency. */
  readonly currency: string | null;
  readonly count: number;
  /** Money at stake (discrepancies.stake_cents): the difference, or the whole amount of a missing or disputed item. */
  readonly amount_cents: number;
}

/** What a run did to the discrepancies' lifecycle. */
export interface LifecycleCounts {
  opened: number;
  reopened: number;
  changed: number;
  resolved: number;
  unchanged: number;
}

/** The counts of a reconcile run that the workflows and the alerts read (reconcile/reconcile-range.ts). */
export interface ReconcileOutcome {
  readonly runId: number;
  readonly matched: {
    readonly transactions: number;
    readonly returns: number;
    readonly notifications: number;
    readonly legacy: number;
  };
  readonly lifecycle: LifecycleCounts;
  /** Discrepancies that hold for the range after the run, by kind and currency. */
  readonly discrepancies: readonly DiscrepancyTotal[];
  readonly totalDiscrepancies: number;
}

/**
 * What matching did for a window, as the reconcile activity returns it: the run's outcome, typed, and
 * the same counts flat (`counts`, as histories recorded before `run` existed hold them).
 */
export interface ReconcileWindowSummary extends DayWindow {
  /** Counts only, never amounts (an amount goes with its currency, in `discrepancies`). */
  readonly counts: Readonly<Record<string, number>>;
  /**
   * By kind and currency. Absent from histories recorded before currencies were split, whose
   * `counts` held `discrepancies.<kind>.cents` without a currency: code reading this tolerates both.
   */
  readonly discrepancies?: readonly DiscrepancyTotal[];
  /** The run's id and lifecycle counts; absent from histories recorded before it was typed. */
  readonly run?: { readonly runId: number | null; readonly lifecycle: Partial<LifecycleCounts> };
}

/**
 * Input of the alert activity, sent by a window workflow: ids, dates and counts only. The webhooks
 * (secrets) are read by the activity from its config, never carried here.
 */
export type AlertInput = RunSummaryAlert | WindowFailureAlert;

/** After the reconcile run of a window of the nightly schedule or of a backfill. */
export interface RunSummaryAlert extends DayWindow {
  readonly type: 'summary';
  /** The window's provider account, when the run is per account. */
  readonly account?: string;
  /** The window workflow's id and run id: the run id keys the deliveries (one summary per run). */
  readonly workflowId: string;
  readonly workflowRunId: string;
  /** The workflow that started the window (nightly or backfill), or null. */
  readonly startedBy: string | null;
  /** reconcile_runs.run_id, when the summary had one. */
  readonly reconcileRunId: number | null;
  /** Discrepancies this run opened (new), reopened and resolved. */
  readonly opened: number;
  readonly reopened: number;
  readonly resolved: number;
  /** Discrepancies that hold for the window after the run, by kind and currency. */
  readonly discrepancies: readonly DiscrepancyTotal[];
}

/** A window that failed after its retries. */
export interface WindowFailureAlert extends DayWindow {
  readonly type: 'failure';
  /** The window's provider account, when the run is per account. */
  readonly account?: string;
  readonly workflowId: string;
  readonly workflowRunId: string;
  readonly startedBy: string | null;
  /** The failure's own message (already in the history; it names sources, never secrets). */
  readonly message: string;
}

/** What the alert activity did, per configured webhook (by position in RECON_ALERT_WEBHOOKS). */
export interface AlertResult {
  readonly webhooks: number;
  readonly delivered: number;
  /** Already delivered by an earlier attempt or run: skipped. */
  readonly skipped: number;
}

/** Input of the low-volume activity: one account's Eastern days to judge. */
export interface VolumeCheckInput extends DayWindow {
  /** The provider account; `default` when absent. */
  readonly account?: string;
}

/** One open low-volume flag: the rows the day held and the usual figure it was compared with. */
export interface VolumeFlagSummary {
  readonly source: Source;
  readonly day: string;
  readonly rows: number;
  readonly usualRows: number;
  readonly baselineDays: number;
}

/** What the low-volume activity found for one account (counts and the first flags only). */
export interface VolumeCheckResult extends DayWindow {
  readonly account: string;
  /** Loaded business days with enough history that were judged, all sources together. */
  readonly judged: number;
  /** Open flags in the range after the check. */
  readonly flagged: number;
  /** The first 50 of them, by day then source. */
  readonly flags: readonly VolumeFlagSummary[];
  /** Flags this check sent to the webhooks (0 when none are configured). */
  readonly alerted: number;
}

/** A low-volume check that failed after its retries (the run goes on). */
export interface VolumeCheckFailure extends DayWindow {
  readonly account: string;
  readonly error: string;
}

/** What the low-volume check of one account came to in a nightly run or a backfill. */
export type VolumeOutcome = VolumeCheckResult | VolumeCheckFailure;

/**
 * What the nightly follow-up did for one account (ingest/follow-up/follow-up-non-final.ts): counts
 * and dates only, as it travels through the workflow's history.
 */
export interface FollowUpResult {
  readonly account: string;
  /** Non-final transactions within the horizon and before the night's windows (asked tonight or not). */
  readonly nonFinal: number;
  readonly lookedUp: number;
  readonly failed: number;
  /** Answers with a final status, written to the provider rows. */
  readonly settled: number;
  readonly stillPending: number;
  /** The status-lookup load that wrote them; null when nothing changed. */
  readonly loadId: number | null;
  /** Eastern dates to reconcile again: those of settled transactions and of newly stuck ones. */
  readonly dates: readonly string[];
}

/** Input of the pull activity: one source, one window of Eastern days. */
export interface PullSourceInput {
  readonly source: Source;
  readonly from: string;
  readonly to: string;
  /**
   * The provider account to pull for (config/accounts.ts); the account `default` when absent (runs
   * recorded before accounts existed).
   */
  readonly account?: string;
}

/** Input of the follow-up activity: one account's non-final transactions dated before `before`. */
export interface FollowUpInput {
  readonly account: string;
  /** The night's Eastern day (RECON_FOLLOW_UP_DAYS counts back from it). */
  readonly day: string;
  /** The first day of the night's windows: they re-pull the days from it on. */
  readonly before: string;
  /** The instant the night is judged at (ISO); absent: now. */
  readonly asOf?: string;
}

/** The retention activity's answer: the setting, the cutoff and the rows cleared per table.column. */
export interface RetentionResult {
  readonly olderThanDays: number;
  /** ISO instant: personal data stored before it was cleared. */
  readonly cutoff: string;
  readonly cleared: Readonly<Record<string, number>>;
}
