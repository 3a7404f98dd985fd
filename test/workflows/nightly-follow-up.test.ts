import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.ts';
import { loadConfig } from '../../config/config.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import type { nightlyWorkflow } from '../../workflows/nightly-workflow.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';

/**
 * The nightly run follows every non-final transaction older than its windows (issue 25 §1), per
 * account with that account's own client, and the next reconcile judges what the provider said.
 * Real Temporal server and worker, real database; no source is pulled (sources: []).
 */

let server: DevServer;
let h: DatabaseHandle;
const ACCOUNTS = ['ca-main', 'us-main'] as const;
const config = loadConfig({ RECON_ENVIRONMENT: 'staging' });

beforeAll(async () => {
  [server, h] = await Promise.all([startTestTemporal(), createTestDatabase()]);
  const pending = { status: 'PENDING', raw_status: 'PENDING', fee_cents: null, notify_status: 'I' } as const;
  for (const account of ACCOUNTS) {
    const load = await insertLoad(h.db, 'report-transactions', account);
    // The same transaction id in both accounts: each account's client is the only one that knows its own.
    await insertTransactions(h.db, load, [
      {
        transaction_id: 'P-1',
        account,
        ...pending,
        transaction_on: '2026-03-02',
        transaction_at: '2026-03-02T15:00:00Z',
      },
    ]);
    await insertLedger(h.db, [
      { merchant_transaction_id: 'M-P-1', account, status: 'PENDING', booked_at: '2026-03-02T15:00:01Z' },
    ]);
  }
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

describe('the nightly follow-up', () => {
  it('asks each account with its own client, settles what the provider says is final and opens stuck_pending for the rest', async () => {
    const asked: [string, string][] = [];
    const clients = new Map(ACCOUNTS.map((name) => [name, { name }]));
    const activities = createActivities<{ name: string }>({
      handle: h,
      provider: { name: 'default' },
      config,
      accounts: {
        names: ACCOUNTS,
        get: (name) =>
          clients.has(name as never) ? { client: clients.get(name as never)!, config } : undefined,
      },
      pullSource: async () => {
        throw new Error('no source is pulled in this test');
      },
      reconcileRange,
      lookupStatus: async (client, transactionId) => {
        asked.push([client.name, transactionId]);
        // ca-main's provider says it settled; us-main's that it is still pending.
        const status = client.name === 'ca-main' ? 'SUCCESS' : 'PENDING';
        return {
          transaction: {
            transactionId,
            transactionStatus: status,
            transactionFee: status === 'SUCCESS' ? 25 : 0,
          },
        };
      },
    });
    const taskQueue = uniqueTaskQueue('follow-up');
    const worker = await startTestWorker(server, taskQueue, activities, { accounts: ACCOUNTS });
    let result;
    try {
      result = await server.client.workflow.execute<typeof nightlyWorkflow>('nightlyWorkflow', {
        taskQueue,
        workflowId: `nightly-${taskQueue}`,
        // Tuesday 10 March: P-1 of Monday 2 March is six business days old.
        args: [{ day: '2026-03-10', lookbackDays: 1, sources: [], asOf: '2026-03-11T06:00:00Z' }],
      });
    } finally {
      await worker.stop();
    }
    expect(asked.sort()).toEqual([
      ['ca-main', 'P-1'],
      ['us-main', 'P-1'],
    ]);
    expect(
      result.followUp?.map((f) => [f.account, f.nonFinal, f.lookedUp, f.settled, f.stillPending, f.dates]),
    ).toEqual([
      ['ca-main', 1, 1, 1, 0, ['2026-03-02']],
      ['us-main', 1, 1, 0, 1, ['2026-03-02']],
    ]);

    const rows = await h.db
      .selectFrom('provider_transactions')
      .select(['account', 'status', 'raw_status', 'fee_cents'])
      .orderBy('account')
      .execute();
    expect(rows).toEqual([
      { account: 'ca-main', status: 'SUCCESSFUL', raw_status: 'SUCCESS', fee_cents: 25 },
      { account: 'us-main', status: 'PENDING', raw_status: 'PENDING', fee_cents: null },
    ]);
    const history = await h.db
      .selectFrom('row_history')
      .select(['account', 'row_key', 'changed_columns'])
      .execute();
    expect(history).toEqual([
      { account: 'ca-main', row_key: 'P-1', changed_columns: ['status', 'raw_status', 'fee_cents'] },
    ]);

    const open = await h.db
      .selectFrom('discrepancies')
      .select(['account', 'discrepancy_key', 'actual'])
      .where('resolved_at', 'is', null)
      .where('kind', '=', 'stuck_pending')
      .execute();
    expect(open).toMatchObject([
      {
        account: 'us-main',
        discrepancy_key: 'stuck_pending:P-1',
        actual: {
          status: 'PENDING',
          last_status_lookup: { looked_up_at: '2026-03-11T06:00:00+00:00', provider_said: 'PENDING' },
        },
      },
    ]);
  });
});
