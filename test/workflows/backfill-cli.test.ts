import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon as runRecon, type ReconRun } from '../support/recon-process.ts';
import {
  type DevServer,
  type RunningWorker,
  startTestTemporal,
  startTestWorker,
  uniqueTaskQueue,
} from '../support/temporal.ts';

/** `recon backfill` as a user runs it, against a cluster (TEMPORAL_ADDRESS set) and its worker. */
let server: DevServer;
let sandbox: Sandbox;
let h: DatabaseHandle;
let worker: RunningWorker;
let closeActivities: () => Promise<void>;
const taskQueue = uniqueTaskQueue('cli');

beforeAll(async () => {
  [server, sandbox, h] = await Promise.all([
    startTestTemporal(),
    startSandbox({ seed: 'cli', transactions: 200, from: '2026-03-01', to: '2026-04-30' }),
    createTestDatabase(8),
  ]);
  const opened = openProductionActivities(loadConfig(sandbox.env()), h);
  closeActivities = opened.close;
  worker = await startTestWorker(server, taskQueue, opened.activities);
});
afterAll(async () => {
  await worker?.stop();
  await closeActivities?.();
  await sandbox?.close();
  await server?.close();
  await h?.close();
});

function recon(args: string[]): Promise<ReconRun> {
  return runRecon(
    h.connectionString,
    args,
    { ...sandbox.env(), TEMPORAL_ADDRESS: server.address, TEMPORAL_TASK_QUEUE: taskQueue },
    { timeoutMs: 60_000 },
  );
}

describe('recon backfill', () => {
  it('runs a backfill to the end, prints its result as JSON and exits 0', async () => {
    const { code, stdout, stderr } = await recon(['backfill', '--from', '2026-03-01', '--to', '2026-04-30']);
    expect(stderr).toContain(`started backfill-2026-03-01-2026-04-30 on ${server.address}`);
    expect(stderr).toMatch(/\[#{24}\] 2\/2 windows \| [\d,]+ rows/);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toMatchObject({
      from: '2026-03-01',
      to: '2026-04-30',
      windows: 2,
      rowsRejected: 0,
      runs: 1,
    });
    const loaded = await h.db
      .selectFrom('provider_transactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(loaded.n)).toBe(200);
  });

  it('refuses a reversed range with exit code 2 before contacting anything', async () => {
    const { code, stdout, stderr } = await recon(['backfill', '--from', '2026-04-30', '--to', '2026-03-01']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'recon: --from 2026-04-30 is after --to 2026-03-01: give --from on or before --to\nsee recon backfill --help\n',
    );
  });
});
