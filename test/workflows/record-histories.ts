/**
 * Re-records the workflow histories that test/workflows/replay.test.ts replays
 * (`node test/workflows/record-histories.ts`). Run it after an intended change of workflow behaviour; the
 * replay test fails on a change that breaks determinism for histories recorded before it.
 * `node test/workflows/record-histories.ts accounts` records only the per-account histories
 * (`*-accounts.json`), leaving those recorded before accounts existed as they are.
 *
 * The activities here return fixed counts without I/O: replay never runs activities, it only checks
 * that the workflow code issues the same commands for the recorded events.
 */
import { writeFileSync } from 'node:fs';
import type { Activities } from '../../activities/index.ts';
import { NIGHTLY_SCHEDULE_ID, upsertNightlySchedule } from '../../workers/client/schedule.ts';
import { startDevServer } from '../../workers/dev-server.ts';
import { installRuntime } from '../../workers/runtime.ts';
import { createReconWorkers } from '../../workers/create-worker.ts';
import type { PullSummary } from '../../domain/load-summary.ts';
import type { PullSourceInput } from '../../workflows/types.ts';
import { daysInclusive } from '../../domain/time/calendar.ts';
import { backfillWorkflowId, windowWorkflowId } from '../../workflows/windows.ts';

const OUT = new URL('../histories/', import.meta.url);
const ACCOUNTS = ['ca-main', 'us-main'] as const;
const onlyAccounts = process.argv[2] === 'accounts';

/** Proto3 JSON (enum names, 64-bit integers as strings), the format the Temporal CLI and UI export. */
function historyToJSON(history: unknown): string {
  // The fetched history is a protobufjs message: its toJSON gives proto3 JSON.
  return JSON.stringify(history, null, 2);
}

const activities: Activities = {
  pullSource: async (input: PullSourceInput): Promise<PullSummary> => {
    const rows = daysInclusive(input.from, input.to) * 10;
    return {
      ...input,
      loadId: 1,
      status: 'committed',
      rowsRead: rows,
      rowsLoaded: rows,
      rowsRejected: 0,
      rowsInserted: rows,
      rowsUpdated: 0,
      rowsUnchanged: 0,
      skipped: false,
      durationMs: 5,
    };
  },
  reconcileWindow: async (input: { from: string; to: string }) => ({
    ...input,
    counts: { 'matched.transactions': 7 },
  }),
  clearPersonalData: async () => null,
  sendAlert: async () => ({ webhooks: 0, delivered: 0, skipped: 0 }),
  listAccounts: async () => [...ACCOUNTS],
  checkVolume: async (input) => ({
    ...input,
    account: input.account ?? 'default',
    judged: 0,
    flagged: 0,
    flags: [],
    alerted: 0,
  }),
  followUpNonFinal: async (input) => ({
    account: input.account,
    nonFinal: 0,
    lookedUp: 0,
    failed: 0,
    settled: 0,
    stillPending: 0,
    loadId: null,
    dates: [],
  }),
};

installRuntime({ level: 'WARN' });
const server = await startDevServer();
const taskQueue = 'record-histories';
const worker = await createReconWorkers({
  connection: server.nativeConnection,
  namespace: server.namespace,
  taskQueue,
  activities,
  accounts: ACCOUNTS,
  settings: {
    maxConcurrentActivityTaskExecutions: 10,
    maxConcurrentWorkflowTaskExecutions: 10,
    maxTaskQueueActivitiesPerSecond: 1000,
    shutdownGraceSeconds: 1,
  },
});
const running = worker.run();
try {
  const save = async (name: string, workflowId: string) => {
    const history = await server.client.workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(new URL(`${name}.json`, OUT), `${historyToJSON(history)}\n`);
    process.stderr.write(`recorded ${name}.json (${history.events?.length ?? 0} events)\n`);
  };
  if (onlyAccounts) await recordAccounts(save);
  else await recordAll(save);
} finally {
  worker.shutdown();
  await running;
  await server.close();
}

/** A backfill of two accounts (two windows each), the window of one account, a nightly of both. */
async function recordAccounts(save: (name: string, workflowId: string) => Promise<void>): Promise<void> {
  const handle = await server.client.workflow.start('backfillWorkflow', {
    taskQueue,
    workflowId: backfillWorkflowId('2026-01-01', '2026-02-20'),
    args: [{ from: '2026-01-01', to: '2026-02-20', accounts: [...ACCOUNTS] }],
  });
  await handle.result();
  await save('backfill-accounts', handle.workflowId);
  await save(
    'window-accounts',
    windowWorkflowId({ from: '2026-01-01', to: '2026-02-09', account: 'us-main' }),
  );
  const nightly = await server.client.workflow.start('nightlyWorkflow', {
    taskQueue,
    workflowId: 'nightly-accounts-2026-03-10',
    args: [{ day: '2026-03-10' }],
  });
  await nightly.result();
  await save('nightly-accounts', nightly.workflowId);
}

async function recordAll(save: (name: string, workflowId: string) => Promise<void>): Promise<void> {
  await server.client.workflow.execute('windowWorkflow', {
    taskQueue,
    workflowId: 'window-2026-01-01-2026-01-10',
    args: [{ from: '2026-01-01', to: '2026-01-10' }],
  });
  await save('window', 'window-2026-01-01-2026-01-10');

  // Three windows, two at a time, and a continue-as-new after two: the recorded run is the last one.
  const handle = await server.client.workflow.start('backfillWorkflow', {
    taskQueue,
    workflowId: backfillWorkflowId('2026-01-01', '2026-04-30'),
    args: [{ from: '2026-01-01', to: '2026-04-30', maxWindowsPerRun: 2 }],
  });
  await handle.result();
  await save('backfill', handle.workflowId);
  const first = await server.client.workflow
    .getHandle(handle.workflowId, handle.firstExecutionRunId)
    .fetchHistory();
  writeFileSync(new URL('backfill-first-run.json', OUT), `${historyToJSON(first)}\n`);
  process.stderr.write(`recorded backfill-first-run.json (${first.events?.length ?? 0} events)\n`);

  const schedule = await upsertNightlySchedule(server.client, { taskQueue });
  await schedule.handle.backfill({
    start: new Date('2026-03-10T06:29:00Z'),
    end: new Date('2026-03-10T06:31:00Z'),
    overlap: 'ALLOW_ALL',
  });
  let workflowId: string | undefined;
  while (!workflowId) {
    workflowId = (await server.client.schedule.getHandle(NIGHTLY_SCHEDULE_ID).describe()).info
      .recentActions[0]?.action.workflow.workflowId;
  }
  await server.client.workflow.getHandle(workflowId).result();
  await save('nightly', workflowId);
}
