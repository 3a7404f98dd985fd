/**
 * The nightly schedule's state and its last runs, read from Temporal when it is reachable (cached
 * for 30 s, so pages do not ask Temporal on every request); never an error for the workbench.
 */
import type { Config } from '../../config/config.ts';
import { NIGHTLY_SCHEDULE_ID } from '../../workers/client/schedule.ts';

export interface ScheduleState {
  readonly reachable: boolean;
  /** Why the state is unknown, in one line (no secrets). */
  readonly message?: string;
  readonly schedule_id: string;
  readonly paused?: boolean;
  readonly note?: string;
  readonly next?: string[];
  readonly recent?: { scheduled_at: string; workflow_id: string; status: string }[];
}

export type ScheduleReader = () => Promise<ScheduleState>;

const CACHE_MS = 30_000;

/** Reads the nightly schedule from TEMPORAL_ADDRESS; without it, says that no cluster is configured. */
export function temporalScheduleReader(
  config: Pick<Config, 'temporalAddress' | 'temporalNamespace'>,
): ScheduleReader {
  let cached: { at: number; state: ScheduleState } | undefined;
  return async () => {
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.state;
    const state = await read(config);
    cached = { at: Date.now(), state };
    return state;
  };
}

async function read(config: Pick<Config, 'temporalAddress' | 'temporalNamespace'>): Promise<ScheduleState> {
  const base = { schedule_id: NIGHTLY_SCHEDULE_ID };
  if (!config.temporalAddress)
    return {
      ...base,
      reachable: false,
      message: 'TEMPORAL_ADDRESS is not set: the nightly schedule lives in a Temporal cluster',
    };
  const { Client, Connection } = await import('@temporalio/client');
  let connection: Awaited<ReturnType<typeof Connection.connect>> | undefined;
  try {
    connection = await Connection.connect({ address: config.temporalAddress, connectTimeout: '3s' });
    const client = new Client({ connection, namespace: config.temporalNamespace });
    const d = await client.schedule.getHandle(NIGHTLY_SCHEDULE_ID).describe();
    const recent = await Promise.all(
      d.info.recentActions.slice(-3).map(async (a) => {
        const id = a.action.workflow.workflowId;
        const status = await client.workflow
          .getHandle(id)
          .describe()
          .then((w) => w.status.name as string)
          .catch(() => 'UNKNOWN');
        return { scheduled_at: a.scheduledAt.toISOString(), workflow_id: id, status };
      }),
    );
    return {
      ...base,
      reachable: true,
      paused: d.state.paused,
      ...(d.state.note ? { note: d.state.note } : {}),
      next: d.info.nextActionTimes.slice(0, 3).map((t) => t.toISOString()),
      recent: recent.reverse(),
    };
  } catch (error) {
    const notFound = (error as Error).name === 'ScheduleNotFoundError';
    return {
      ...base,
      reachable: !notFound ? false : true,
      message: notFound
        ? `no schedule ${NIGHTLY_SCHEDULE_ID} on ${config.temporalAddress}: create it with recon schedule create`
        : `Temporal at ${config.temporalAddress} did not answer: check that it runs and TEMPORAL_ADDRESS`,
    };
  } finally {
    await connection?.close().catch(() => {});
  }
}
