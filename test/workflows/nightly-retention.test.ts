import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { loadReport } from '../../ingest/load/load-report.ts';
import { PERSONAL_MARK as M } from '../../domain/privacy.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * The nightly run ends with the retention activity: with RECON_RAW_RETENTION_DAYS set on the worker
 * it clears personal data older than that; unset, it clears nothing. Real server, worker, database;
 * no source is pulled (sources: []), so the windows only reconcile.
 */
const EMAIL = 'nightly.person@plant-retention.example';
const LINE = `20260310,D,ORD-ET1,ET1,0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-1,101500,CA,${EMAIL},481-20375-****8642`;

let server: DevServer;
let h: DatabaseHandle;
beforeAll(async () => {
  [server, h] = await Promise.all([startTestTemporal(), createTestDatabase()]);
  await loadReport(
    h,
    {
      source: 'legacy-transactions',
      format: 'legacy',
      queryType: '5',
      fileName: 'legacy5.csv',
      origin: 'file',
      environment: 'staging',
    },
    Readable.from([Buffer.from(`${LINE}\n`)]),
  );
  await sql`update legacy_transactions set updated_at = now() - interval '40 days'`.execute(h.db);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

async function nightly(env: Record<string, string>) {
  const taskQueue = uniqueTaskQueue('retention');
  const activities = createActivities({
    handle: h,
    provider: null,
    config: loadConfig({ RECON_ENVIRONMENT: 'staging', ...env }),
    pullSource: async () => {
      throw new Error('no source is pulled in this test');
    },
    reconcileRange: async () => ({}),
  });
  const worker = await startTestWorker(server, taskQueue, activities);
  try {
    return await server.client.workflow.execute<typeof nightlyWorkflow>('nightlyWorkflow', {
      taskQueue,
      workflowId: `nightly-${taskQueue}`,
      args: [{ day: '2026-03-10', lookbackDays: 0, sources: [] }],
    });
  } finally {
    await worker.stop();
  }
}

const raw = async () =>
  (await sql<{ raw: string }>`select raw from legacy_transactions`.execute(h.db)).rows[0]!.raw;

describe('nightly retention (RECON_RAW_RETENTION_DAYS)', () => {
  it('clears nothing when the setting is unset', async () => {
    const result = await nightly({});
    expect(result.retention).toBeNull();
    expect(await raw()).toContain(EMAIL);
  });

  it('keeps data younger than the setting and clears what is older', async () => {
    const kept = await nightly({ RECON_RAW_RETENTION_DAYS: '60' });
    expect(kept.retention).toMatchObject({ olderThanDays: 60 });
    expect(kept.retention?.cleared['legacy_transactions.raw']).toBe(0);
    expect(await raw()).toContain(EMAIL);

    const cleared = await nightly({ RECON_RAW_RETENTION_DAYS: '30' });
    expect(cleared.retention?.cleared).toMatchObject({
      'legacy_transactions.raw': 1,
      'provider_transactions.raw': 0,
    });
    expect(await raw()).toBe(LINE.replace(EMAIL, M).replace('481-20375-****8642', M));
  });

  it('refuses a malformed setting when the worker starts', () => {
    expect(() => loadConfig({ RECON_RAW_RETENTION_DAYS: '30d' })).toThrow(
      'RECON_RAW_RETENTION_DAYS="30d" is not a number of days: set it to a whole number from 0 to 36500, or unset it',
    );
  });
});
