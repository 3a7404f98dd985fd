import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { startBackfill } from '../../workers/client/backfill.ts';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * Secrets never reach workflow histories: after a backfill that succeeds and one that fails on bad
 * credentials, every event of every workflow they started (payloads decoded) is searched for the
 * client secret, the legacy merchant password, the wrong credentials and every token the sandbox issued.
 */
let server: DevServer;
let sandbox: Sandbox;
let h: DatabaseHandle;

beforeAll(async () => {
  [server, sandbox, h] = await Promise.all([
    startTestTemporal(),
    startSandbox({ seed: 'history-secrets', transactions: 200, from: '2026-03-01', to: '2026-03-31' }),
    createTestDatabase(),
  ]);
});
afterAll(async () => {
  await sandbox?.close();
  await server?.close();
  await h?.close();
});

/** Every string inside a history, with the bytes of payloads and failures decoded as UTF-8. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

async function runBackfill(from: string, to: string, env: Record<string, string>): Promise<void> {
  const taskQueue = uniqueTaskQueue('secrets');
  const opened = openProductionActivities(loadConfig({ ...sandbox.env(), ...env }), h);
  const worker = await startTestWorker(server, taskQueue, opened.activities);
  try {
    const { handle } = await startBackfill(server.client, { from, to, taskQueue });
    await handle.result().catch(() => undefined);
  } finally {
    await worker.stop();
    await opened.close();
  }
}

it('keeps client secret, merchant password and tokens out of every workflow history', async () => {
  await runBackfill('2026-03-01', '2026-03-15', {});
  await runBackfill('2026-03-16', '2026-03-31', {
    RECON_CLIENT_SECRET: 'wrong-client-secret-7f3a',
    RECON_LEGACY_MERCHANT_PASS: 'wrongpass9c1e',
  });

  const secrets = [
    sandbox.clientSecret,
    sandbox.legacyMerchantPass,
    'wrong-client-secret-7f3a',
    'wrongpass9c1e',
    ...sandbox.issuedTokens(),
  ];
  expect(sandbox.issuedTokens().length).toBeGreaterThan(0);

  const texts: string[] = [];
  let workflows = 0;
  for await (const execution of server.client.workflow.list()) {
    const history = await server.client.workflow
      .getHandle(execution.workflowId, execution.runId)
      .fetchHistory();
    texts.push(...strings(history));
    workflows++;
  }
  // Two backfills and their windows (each at most 40 days: one window per backfill here).
  expect(workflows).toBeGreaterThanOrEqual(4);
  const all = texts.join('\n');
  // The histories do hold what the windows did (so this search is over real content).
  expect(all).toContain('report-transactions');
  for (const secret of secrets) expect(all, 'a secret is in a workflow history').not.toContain(secret);
});
