import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { isBusinessDay } from '../../domain/time/business-days.ts';
import { datesBetween } from '../../domain/time/calendar.ts';
import type { backfillWorkflow } from '../../workflows/backfill-workflow.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import { createTestDatabase } from '../support/database.ts';
import { loadDailyLegacyRows } from '../support/daily-legacy-rows.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * The nightly run and a backfill end with the low-volume check of each account: a business day that
 * loaded nothing is flagged, and the alert webhook (a real receiver on 127.0.0.1) is told the account,
 * source, day, rows and the usual figure. Real Temporal server, worker and database; no source is
 * pulled (sources: []), the data was loaded before.
 */
let server: DevServer;
let h: DatabaseHandle;
let receiver: Server;
let hook: string;
const lowVolume: Record<string, unknown>[] = [];

beforeAll(async () => {
  [server, h] = await Promise.all([startTestTemporal(), createTestDatabase()]);
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (body.type === 'low_volume') lowVolume.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hook = `json:http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;
  const rows: Record<string, number> = {};
  for (const day of datesBetween('2026-02-02', '2026-03-06')) if (isBusinessDay(day)) rows[day] = 30;
  rows['2026-03-05'] = 0; // a Thursday that loaded nothing
  await loadDailyLegacyRows(h, { from: '2026-02-02', to: '2026-03-06' }, rows);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function withWorker<T>(run: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = uniqueTaskQueue('volume');
  const activities = createActivities({
    handle: h,
    provider: null,
    config: loadConfig({ RECON_ENVIRONMENT: 'staging', RECON_ALERT_WEBHOOKS: hook }),
    pullSource: async () => {
      throw new Error('no source is pulled in this test');
    },
    reconcileRange: async () => ({}),
  });
  const worker = await startTestWorker(server, taskQueue, activities);
  try {
    return await run(taskQueue);
  } finally {
    await worker.stop();
  }
}

describe('the low-volume check in the workflows', () => {
  it('the nightly run flags the day that loaded nothing and alerts with the usual figure', async () => {
    const result = await withWorker((taskQueue) =>
      server.client.workflow.execute<typeof nightlyWorkflow>('nightlyWorkflow', {
        taskQueue,
        workflowId: `nightly-${taskQueue}`,
        args: [{ day: '2026-03-06', lookbackDays: 4, sources: [] }],
      }),
    );
    expect(result.volume).toEqual([
      {
        account: 'default',
        from: '2026-03-02',
        to: '2026-03-06',
        judged: 5,
        flagged: 1,
        flags: [
          { source: 'legacy-transactions', day: '2026-03-05', rows: 0, usualRows: 30, baselineDays: 20 },
        ],
        alerted: 1,
      },
    ]);
    expect(lowVolume).toHaveLength(1);
    expect(lowVolume[0]).toMatchObject({
      account: 'default',
      days: [{ date: '2026-03-05', source: 'legacy-transactions', rows: 0, usual_rows: 30 }],
    });
  });

  it('a backfill checks its whole range at the end, and a flag already sent is not sent again', async () => {
    const result = await withWorker((taskQueue) =>
      server.client.workflow.execute<typeof backfillWorkflow>('backfillWorkflow', {
        taskQueue,
        workflowId: `backfill-${taskQueue}`,
        args: [{ from: '2026-02-16', to: '2026-03-06', windowDays: 7, sources: [] }],
      }),
    );
    expect(result.volume).toMatchObject([
      { account: 'default', from: '2026-02-16', to: '2026-03-06', flagged: 1, alerted: 0 },
    ]);
    expect(lowVolume).toHaveLength(1);
  });
});
