import { Context } from '@temporalio/activity';
import { DEFAULT_ACCOUNT } from '../../domain/account-name.ts';
import { readPullCursor, savePullCursor } from '../../db/pull-cursors.ts';
import { recordLoad } from '../../observability/metrics.ts';
import { readCommittedLoad } from '../../db/loads.ts';
import { type LoadSummary, pullSummary, type PullSummary } from '../../domain/load-summary.ts';
import type { PullSourceInput } from '../../domain/run-summary.ts';
import { whileHeartbeating } from '../heartbeat-interval.ts';
import type { ActivityDependencies } from '../dependencies.ts';
import { accountTarget } from '../account-target.ts';

/** Heartbeat details: what a later attempt of the same activity can trust. */
export interface PullHeartbeat {
  readonly phase: 'pulling' | 'committed';
  readonly rowsRead: number;
  readonly bytes: number;
  readonly loadId?: number;
}

/**
 * Builds the pull activity: one source, one window, streamed from the provider into Postgres by
 * `pullSource`; only counts come back. It heartbeats with the rows read (and every few seconds while
 * the network is quiet) and stops when cancelled. A load is whole or nothing, so a response cannot be
 * resumed half-way: what a retry resumes from is the last committed load. When this workflow run
 * already committed the source and window (the cursor in `pull_cursors`, or the previous attempt's
 * heartbeat), the attempt returns that load's counts without pulling again. A new run (another
 * backfill, tomorrow's nightly) always pulls again: statuses change and the loader is idempotent.
 */
export function createPullSource<Client>(deps: ActivityDependencies<Client>) {
  const { db } = deps.handle;
  return async function pullSource(input: PullSourceInput): Promise<PullSummary> {
    const ctx = Context.current();
    // Always set when a workflow schedules the activity; a standalone run keys on the activity itself.
    const workflowExecution = ctx.info.workflowExecution ?? {
      workflowId: `activity-${ctx.info.activityId}`,
      runId: ctx.info.activityId,
    };
    const key = { source: input.source, from: input.from, to: input.to };
    const account = input.account ?? DEFAULT_ACCOUNT;
    const target = accountTarget(deps, account);

    // Each account has its own cursors (pull_cursors.account).
    const cursorKey = { ...key, account };
    const cursor = await readPullCursor(db, cursorKey);
    const previous = ctx.info.heartbeatDetails as PullHeartbeat | undefined;
    const committedLoadId =
      cursor &&
      cursor.workflow_id === workflowExecution.workflowId &&
      cursor.run_id === workflowExecution.runId
        ? cursor.load_id
        : previous?.phase === 'committed'
          ? previous.loadId
          : undefined;
    if (committedLoadId !== undefined) {
      const load = await readCommittedLoad(db, committedLoadId);
      if (load) {
        ctx.log.info('pull already committed by this run: skipped', { ...key, loadId: load.loadId });
        return pullSummary(input, load, true);
      }
    }

    let progress = { rowsRead: 0, bytes: 0 };
    const beat = () => ctx.heartbeat({ phase: 'pulling', ...progress } satisfies PullHeartbeat);
    beat();
    const load: LoadSummary = await whileHeartbeating(
      deps.heartbeatEverySeconds,
      () =>
        deps.pullSource(
          { handle: deps.handle, client: target.client, config: target.config },
          {
            ...key,
            account,
            origin: 'workflow',
            workflowId: workflowExecution.workflowId,
            // A window is not loaded from an answer that is mostly rejected lines (docs/operations.md).
            maxRejected: target.config.maxRejectedPerWindow,
            maxRejectedSetting: 'RECON_MAX_REJECTED_PER_WINDOW',
            onProgress: (p) => {
              progress = { rowsRead: p.rowsRead, bytes: p.bytes };
              beat();
            },
            signal: ctx.cancellationSignal,
          },
        ),
      beat,
    );
    if (deps.metrics) recordLoad(deps.metrics, load);
    if (load.status === 'committed') {
      await savePullCursor(db, {
        ...cursorKey,
        loadId: load.loadId,
        fileSha256: load.fileSha256,
        rowsLoaded: load.rowsLoaded,
        workflowId: workflowExecution.workflowId,
        runId: workflowExecution.runId,
      });
      ctx.heartbeat({ phase: 'committed', ...progress, loadId: load.loadId } satisfies PullHeartbeat);
    }
    return pullSummary(input, load, false);
  };
}
