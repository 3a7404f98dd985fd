import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ApplicationFailure, executeChild, sleep } from '@temporalio/workflow';
import type { WindowInput, WindowResult } from './types.ts';
import { windowWorkflow } from './window-workflow.ts';
import { windowWorkflowId } from './windows.ts';

/** How long a window waits for its twin (the same window run by another backfill or the nightly run). */
export const TWIN_WAIT = '30 seconds';
export const TWIN_WAITS = 120;

/**
 * Runs one window as a child workflow whose id is derived from the window, so that the same window
 * never runs twice at once. When another workflow (an overlapping backfill, the nightly run) already
 * runs it, this one waits for that run to end and then runs the window itself (idempotent: committed
 * loads are skipped, matching is re-run), rather than failing; after an hour it gives up with a
 * message saying which window it waited for.
 */
export async function executeWindow(input: WindowInput): Promise<WindowResult> {
  const workflowId = windowWorkflowId(input);
  for (let wait = 0; ; wait++) {
    try {
      return await executeChild(windowWorkflow, { workflowId, args: [input] });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      if (wait >= TWIN_WAITS) {
        throw ApplicationFailure.nonRetryable(
          `${input.account === undefined ? '' : `account ${input.account}: `}window ${input.from}..${input.to} (${workflowId}) was still running for another workflow after ` +
            `${TWIN_WAITS} waits of ${TWIN_WAIT}: see that workflow in Temporal, then run this range again`,
          'WindowBusy',
        );
      }
      await sleep(TWIN_WAIT);
    }
  }
}
