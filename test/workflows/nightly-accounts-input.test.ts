import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * The nightly run's `accounts` input (recon nightly --account, or any client that starts the
 * workflow) is checked where it enters, as the backfill's is: a name that is not an account name
 * fails the run at once, not retried (`InvalidAccounts`), before any window or activity runs. Real
 * server and worker; every activity throws, so one that runs fails the test.
 */
let server: DevServer;
beforeAll(async () => {
  server = await startTestTemporal();
});
afterAll(async () => {
  await server?.close();
});

const called: string[] = [];
const noActivity = new Proxy({} as Activities, {
  get: (_target, name) =>
    typeof name === 'string'
      ? async () => {
          called.push(name);
          throw ApplicationFailure.nonRetryable(`activity ${name} ran`);
        }
      : undefined,
  has: () => true,
});

describe('nightlyWorkflow: its accounts are checked before anything runs', () => {
  it.each([
    [['Not_An_Account'], 'a name is 1 to 32 of a-z, 0-9 and -'],
    [[], 'accounts is empty'],
    [['east', 'east'], 'accounts names an account twice'],
  ])('accounts %j: InvalidAccounts, not retried', async (accounts, problem) => {
    const taskQueue = uniqueTaskQueue('nightly-accounts');
    const worker = await startTestWorker(server, taskQueue, noActivity);
    try {
      const run = server.client.workflow.execute<typeof nightlyWorkflow>('nightlyWorkflow', {
        taskQueue,
        workflowId: `nightly-${taskQueue}`,
        args: [{ day: '2026-03-10', lookbackDays: 0, sources: [], accounts }],
        workflowExecutionTimeout: '30s',
      });
      const error = await run.then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('InvalidAccounts');
      expect((cause as ApplicationFailure).nonRetryable).toBe(true);
      expect(cause?.message).toContain(problem);
      expect(called).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
