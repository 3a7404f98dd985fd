import {
  type Client,
  ScheduleAlreadyRunning,
  type ScheduleDescription,
  type ScheduleHandle,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import { ConfigError } from '../../domain/errors.ts';
import type { NightlyInput } from '../../workflows/types.ts';

/** Id of the nightly reconciliation schedule. */
export const NIGHTLY_SCHEDULE_ID = 'recon-nightly';
export const NIGHTLY_TIME_ZONE = 'America/Toronto';
export const DEFAULT_NIGHTLY_TIME = '02:30';

export interface NightlyScheduleSettings {
  readonly taskQueue: string;
  /** Local time in America/Toronto, HH:MM (default 02:30). */
  readonly at?: string;
  /** Days before the scheduled day also covered by each run (default 3). */
  readonly lookbackDays?: number;
  /** How far back missed runs are still taken after an outage (default 3 days). */
  readonly catchupWindowHours?: number;
}

/** The cron expression of a local HH:MM ("30 2 * * *" for 02:30); throws ConfigError when malformed. */
export function nightlyCron(at: string): string {
  const m = /^(\d{1,2}):(\d{2})$/.exec(at);
  const [hour, minute] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!(hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59)) {
    throw new ConfigError(
      `nightly time ${JSON.stringify(at)} is not valid: write it HH:MM, 24-hour, e.g. 02:30`,
    );
  }
  return `${minute} ${hour} * * *`;
}

function scheduleOptions(settings: NightlyScheduleSettings) {
  const input: NightlyInput = { lookbackDays: settings.lookbackDays ?? 3 };
  return {
    spec: {
      cronExpressions: [nightlyCron(settings.at ?? DEFAULT_NIGHTLY_TIME)],
      timezone: NIGHTLY_TIME_ZONE,
    },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'nightlyWorkflow',
      // The schedule appends the scheduled time to this id, one workflow per run.
      workflowId: 'nightly',
      taskQueue: settings.taskQueue,
      args: [input],
    },
    policies: {
      // A run that outlasts a day is followed by at most one queued run, never two at once.
      overlap: ScheduleOverlapPolicy.BUFFER_ONE,
      // Set explicitly: after an outage, runs missed within this window are still taken (each covers
      // the day it stands for); older ones are left to a backfill.
      catchupWindow: `${settings.catchupWindowHours ?? 72} hours`,
      pauseOnFailure: false,
    },
  };
}

/**
 * Creates the nightly schedule, or updates it to these settings when it exists. Idempotent: the
 * result says which happened.
 */
export async function upsertNightlySchedule(
  client: Client,
  settings: NightlyScheduleSettings,
): Promise<{ created: boolean; handle: ScheduleHandle }> {
  const options = scheduleOptions(settings);
  try {
    const handle = await client.schedule.create({ scheduleId: NIGHTLY_SCHEDULE_ID, ...options });
    return { created: true, handle };
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    const handle = client.schedule.getHandle(NIGHTLY_SCHEDULE_ID);
    await handle.update((previous) => ({
      ...options,
      state: { paused: previous.state.paused, note: previous.state.note },
    }));
    return { created: false, handle };
  }
}

function times(d: ScheduleDescription): string[] {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (d.spec.calendars ?? []).flatMap((c) =>
    (c.hour ?? []).flatMap((h) => (c.minute ?? []).map((m) => `${pad(h.start)}:${pad(m.start)}`)),
  );
}

/** A short human description of the schedule: spec, policies, state, recent and next runs. */
export function describeSchedule(d: ScheduleDescription): string {
  const action = d.action.type === 'startWorkflow' ? d.action : undefined;
  const lines = [
    `schedule ${d.scheduleId}: ${d.state.paused ? 'PAUSED' : 'active'}${d.state.note ? ` (${d.state.note})` : ''}`,
    `  when: every day at ${times(d).join(', ') || '(custom spec)'} ${d.spec.timezone ?? 'UTC'}`,
    `  runs: ${action ? `${action.workflowType} on task queue ${action.taskQueue}, input ${JSON.stringify(action.args)}` : d.action.type}`,
    `  policies: overlap ${d.policies.overlap}, catch-up window ${Math.round(d.policies.catchupWindow / 3_600_000)} h`,
    `  actions taken: ${d.info.numActionsTaken}, missed (catch-up window): ${d.info.numActionsMissedCatchupWindow}, skipped (overlap): ${d.info.numActionsSkippedOverlap}`,
    ...d.info.recentActions
      .slice(-5)
      .map((a) => `  ran: scheduled ${a.scheduledAt.toISOString()} → ${a.action.workflow.workflowId}`),
    ...d.info.nextActionTimes.slice(0, 3).map((t) => `  next: ${t.toISOString()}`),
  ];
  return lines.join('\n');
}
