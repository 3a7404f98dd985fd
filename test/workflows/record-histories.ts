/**
 * Re-records the workflow histories that test/workflows/replay.test.ts replays
 * (`node test/workflows/record-histories.ts`). Run it after an intended change of workflow behaviour; the
 * replay test fails on a change that breaks determinism for histories recorded before it.
 *
 * The activities here return fixed counts without I/O: replay never runs activities, it only checks
 * that the workflow code issues the same commands for the recorded events.
 */
import { writeFileSync } from 'node:fs';
import type { Activities } from '../../activities/index.ts';
import { NIGHTLY_SCHEDULE_ID, upsertNightlySchedule } from '../../workers/client/schedule.ts';
import { startDevServer } from '../../workers/dev-server.ts';
import { installRuntime } from '../../workers/runtime.ts';
import { createReconWorker } from '../../workers/create-worker.ts';
import type { PullSourceInput, PullSummary } from '../../workflows/types.ts';
import { backfillWorkflowId, daysInclusive } from '../../workflows/windows.ts';

const OUT = new URL('../histories/', import.meta.url);

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
  listAccounts: async () => ['default'],
};

installRuntime({ level: 'WARN' });
const server = await startDevServer();
const taskQueue = 'record-histories';
const worker = await createReconWorker({
  connection: server.nativeConnection,
  namespace: server.namespace,
  taskQueue,
  activities,
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
} finally {
  worker.shutdown();
  await running;
  await server.close();
}
