import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import type { backfillWorkflow } from '../../workflows/backfill-workflow.ts';
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

/** `run(taskQueue)` beside a worker whose every activity fails the test. */
async function withWorker(prefix: string, run: (taskQueue: string) => Promise<void>): Promise<void> {
  const taskQueue = uniqueTaskQueue(prefix);
  const worker = await startTestWorker(server, taskQueue, noActivity);
  try {
    await run(taskQueue);
  } finally {
    await worker.stop();
  }
}

const nightly = (taskQueue: string, input: Parameters<typeof nightlyWorkflow>[0]) =>
  server.client.workflow.execute<typeof nightlyWorkflow>('nightlyWorkflow', {
    taskQueue,
    workflowId: `nightly-${taskQueue}`,
    args: [input],
    workflowExecutionTimeout: '30s',
  });

describe('nightlyWorkflow: its accounts are checked before anything runs', () => {
  it.each([
    [['Not_An_Account'], 'a name is 1 to 32 of a-z, 0-9 and -'],
    [[], 'accounts is empty'],
    [['east', 'east'], 'accounts names an account twice'],
  ])('accounts %j: InvalidAccounts, not retried', async (accounts, problem) => {
    await withWorker('nightly-accounts', (taskQueue) =>
      expectRefused(
        nightly(taskQueue, { day: '2026-03-10', lookbackDays: 0, sources: [], accounts }),
        'InvalidAccounts',
        problem,
      ),
    );
  });
});

/** The run's failure: an ApplicationFailure of `type`, not retried, whose message names `problem`; no activity ran. */
async function expectRefused(run: Promise<unknown>, type: string, problem: string): Promise<void> {
  const error = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(type);
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  expect(cause?.message).toContain(problem);
  expect(called).toEqual([]);
}

describe("a workflow's dates are checked by the one date-window check, with its one error type", () => {
  it('a nightly day that is not a date and a backfill range given backwards: InvalidDateWindow, not retried', async () => {
    await withWorker('window-input', async (taskQueue) => {
      await expectRefused(
        nightly(taskQueue, { day: '2026-02-30', lookbackDays: 0, sources: [] }),
        'InvalidDateWindow',
        'day "2026-02-30" is not a date: write it YYYY-MM-DD',
      );
      await expectRefused(
        server.client.workflow.execute<typeof backfillWorkflow>('backfillWorkflow', {
          taskQueue,
          workflowId: `backfill-${taskQueue}`,
          args: [{ from: '2026-03-10', to: '2026-03-01', sources: ['report-transactions'] }],
          workflowExecutionTimeout: '30s',
        }),
        'InvalidDateWindow',
        'from 2026-03-10 is after to 2026-03-01: give the earlier date first',
      );
    });
  });
});
