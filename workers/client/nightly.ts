import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import type { NightlyInput, NightlyResult } from '../../workflows/types.ts';

/**
 * Workflow id of a night run by hand (`recon nightly --date`): derived from the day (and the account),
 * so running the same night twice at once re-attaches to the first run instead of starting another.
 */
export function manualNightlyWorkflowId(day: string, account?: string): string {
  return account === undefined ? `nightly-manual-${day}` : `nightly-manual-${account}-${day}`;
}

/**
 * Runs the schedule's workflow (nightlyWorkflow) for one Eastern day in the foreground and returns its
 * result; a run of the same night already going is waited for. Throws the workflow's failure.
 */
export async function runNightly(
  client: Client,
  input: NightlyInput & { readonly day: string },
  taskQueue: string,
  account?: string,
): Promise<{ workflowId: string; started: boolean; result: NightlyResult }> {
  const workflowId = manualNightlyWorkflowId(input.day, account);
  try {
    const handle = await client.workflow.start<typeof nightlyWorkflow>('nightlyWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
    });
    return { workflowId, started: true, result: await handle.result() };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    const handle = client.workflow.getHandle<typeof nightlyWorkflow>(workflowId);
    return { workflowId, started: false, result: await handle.result() };
  }
}
