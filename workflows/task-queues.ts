/**
 * The task queue of one account's provider activities: `<workflow queue>-provider-<account>`. Each
 * account's pulls go through their own queue, so the queue's rate limit (maxTaskQueueActivitiesPerSecond,
 * enforced by the server across every worker that polls it) is that account's provider quota, and a
 * slow or failing account never takes another's turn. Every worker polls the queue of each account
 * it is configured with (workers/create-worker.ts).
 */
export function providerTaskQueue(workflowTaskQueue: string, account: string): string {
  return `${workflowTaskQueue}-provider-${account}`;
}
