import {
  type Client,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type WorkflowHandle,
} from '@temporalio/client';
import type { backfillWorkflow } from '../../workflows/backfill-workflow.ts';
import { progressQuery } from '../../workflows/backfill-workflow.ts';
import type { BackfillInput, BackfillProgress } from '../../workflows/types.ts';
import { backfillWorkflowId } from '../../workflows/windows.ts';

export type BackfillHandle = WorkflowHandle<typeof backfillWorkflow>;

/**
 * Starts the backfill of Eastern days `from`..`to`, or re-attaches to the one already running for the
 * same range (workflow id derived from the range, and from `account` for a backfill of one account;
 * conflict policy USE_EXISTING). A range whose
 * earlier backfill has finished starts afresh (reuse policy ALLOW_DUPLICATE): loads are idempotent.
 * `started` is false when an existing run was found (USE_EXISTING also covers two starts racing).
 */
export async function startBackfill(
  client: Client,
  options: Omit<BackfillInput, 'state'> & {
    taskQueue: string;
    /** The one account of a backfill started with --account (its id includes it). */
    account?: string;
  },
): Promise<{ handle: BackfillHandle; started: boolean }> {
  const { taskQueue, account: _one, ...input } = options;
  const workflowId = backfillWorkflowId(input.from, input.to, options.account);
  const existing = client.workflow.getHandle<typeof backfillWorkflow>(workflowId);
  const running = await existing.describe().then(
    (d) => d.status.name === 'RUNNING',
    () => false,
  );
  if (running) return { handle: existing, started: false };
  await client.workflow.start<typeof backfillWorkflow>('backfillWorkflow', {
    workflowId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
  return { handle: existing, started: true };
}

/** The backfill's progress query; works while it runs and after it ends (a worker answers it). */
export async function backfillProgress(handle: BackfillHandle): Promise<BackfillProgress> {
  return handle.query(progressQuery);
}
