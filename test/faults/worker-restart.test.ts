import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevServer, type DevServer } from '../../workers/dev-server.ts';
import { installRuntime } from '../../workers/runtime.ts';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import type { WindowResult } from '../../workflows/types.ts';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';
import { spawnRecon } from '../support/recon-process.ts';

/**
 * `recon worker` as an OS process (a real Temporal dev server, the provider sandbox) while its
 * PostgreSQL restarts and crashes: the process keeps running, and window workflows (pull every source,
 * then reconcile) started after the database came back, or running while it went away, complete:
 * their activities fail while it is away, Temporal retries them, and they succeed once it returns.
 */
let pgServer: FaultPostgres;
let temporal: DevServer;
let sandbox: Sandbox;
let worker: ChildProcess;
let output: () => string = () => '';
const taskQueue = `faults-${randomBytes(4).toString('hex')}`;
const alive = () => worker.exitCode === null && worker.signalCode === null;

beforeAll(async () => {
  installRuntime({ level: 'ERROR' });
  [pgServer, temporal, sandbox] = await Promise.all([
    startFaultPostgres(),
    startDevServer(),
    startSandbox({ seed: 'faults', transactions: 300, from: '2026-03-01', to: '2026-03-31' }),
  ]);
  const started = spawnRecon(
    pgServer.url,
    ['worker'],
    { ...sandbox.env(), TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: taskQueue },
    { cwd: mkdtempSync(join(tmpdir(), 'recon-worker-')) },
  );
  worker = started.child;
  output = started.output;
  for (let i = 0; i < 1200 && !output().includes(`task queue ${taskQueue}`); i++) {
    if (!alive()) throw new Error(`recon worker exited on start:\n${output()}`);
    await sleep(100);
  }
  if (!output().includes(`task queue ${taskQueue}`))
    throw new Error(`recon worker did not start:\n${output()}`);
});
afterAll(async () => {
  if (worker && alive()) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    if (alive()) worker.kill('SIGKILL');
  }
  await sandbox?.close();
  await temporal?.close();
  await pgServer?.close();
});

async function runWindow(from: string, to: string, during?: () => Promise<void>): Promise<WindowResult> {
  const handle = await temporal.client.workflow.start('windowWorkflow', {
    taskQueue,
    workflowId: `faults-window-${from}-${randomBytes(3).toString('hex')}`,
    args: [{ from, to }],
  });
  await during?.();
  return (await handle.result()) as WindowResult;
}

async function count(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: pgServer.url });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe('recon worker outlives its database', () => {
  it('completes a window after a PostgreSQL restart, without being restarted itself', async () => {
    const first = await runWindow('2026-03-01', '2026-03-05');
    expect(first.rowsLoaded).toBeGreaterThan(0);
    await pgServer.restart('fast');
    await sleep(500);
    expect(alive(), output()).toBe(true);
    const second = await runWindow('2026-03-06', '2026-03-10');
    expect(second.rowsLoaded).toBeGreaterThan(0);
    expect(second.reconcile.counts).toBeDefined();
    expect(alive(), output()).toBe(true);
    expect(output()).not.toContain("Unhandled 'error' event");
  });

  it('finishes a window whose database crashes while it runs: activities are retried once it is back', async () => {
    const result = await runWindow('2026-03-11', '2026-03-20', async () => {
      await sleep(300);
      await pgServer.crash();
      await sleep(2000);
      expect(alive(), output()).toBe(true);
      await pgServer.start();
    });
    expect(result.rowsLoaded).toBeGreaterThan(0);
    expect(alive(), output()).toBe(true);
    expect(output()).not.toContain("Unhandled 'error' event");
    expect(await count('reconcile_runs')).toBeGreaterThanOrEqual(3);
  });
});
