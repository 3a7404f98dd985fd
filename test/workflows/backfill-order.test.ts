import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import { loadMerchantSide } from '../../sandbox/load-merchant-side.ts';
import { deriveMerchantView, type MerchantView } from '../../sandbox/merchant-view.ts';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import { startBackfill } from '../../workers/client/backfill.ts';
import { openProductionActivities } from '../../workers/production-activities.ts';
import { splitWindows, windowWorkflowId } from '../../workflows/windows.ts';
import { createTestDatabase } from '../support/database.ts';
import { type DevServer, startTestTemporal, startTestWorker, uniqueTaskQueue } from '../support/temporal.ts';
import { tableChecksums } from '../support/workflow-warehouse.ts';

/**
 * A backfill's warehouse does not depend on the order its windows finish in (issue 25, section 3):
 * with one window's provider answers delayed, the windows after it are loaded and reconciled before
 * it, so returns are matched before their originals are loaded. The warehouse must end as after a
 * clean run, window after window. Real Temporal, real worker and activities, the sandbox over HTTP.
 */

const FROM = '2026-01-01';
const TO = '2026-01-30';
const WINDOW_DAYS = 10;
const DELAY_MS = 12_000;
let server: DevServer;
let sandbox: Sandbox;
let view: MerchantView;
const databases: DatabaseHandle[] = [];

beforeAll(async () => {
  view = deriveMerchantView({ seed: 'backfill-order', transactions: 1500, from: FROM, to: TO });
  [server, sandbox] = await Promise.all([startTestTemporal(), startSandbox({ history: view.history })]);
});
afterAll(async () => {
  await sandbox?.close();
  await server?.close();
  for (const h of databases) await h.close();
});

/** Runs a backfill of FROM..TO into a fresh warehouse holding the merchant side of the view. */
async function backfill(parallelism: number): Promise<DatabaseHandle> {
  const h = await createTestDatabase(12);
  databases.push(h);
  await loadMerchantSide(h, view, 'staging');
  const taskQueue = uniqueTaskQueue('order');
  const opened = openProductionActivities(loadConfig({ ...sandbox.env(), RECON_ENVIRONMENT: 'staging' }), h);
  const worker = await startTestWorker(server, taskQueue, opened.activities);
  try {
    const { handle } = await startBackfill(server.client, {
      from: FROM,
      to: TO,
      taskQueue,
      windowDays: WINDOW_DAYS,
      parallelism,
    });
    await handle.result();
  } finally {
    await worker.stop();
    await opened.close();
  }
  return h;
}

/** What matching wrote, without run ids, instants or serial ids: comparable across two warehouses. */
async function matchingState(h: DatabaseHandle) {
  const rows = async (query: ReturnType<typeof sql<{ r: string }>>) =>
    (await query.execute(h.db)).rows.map((x) => x.r);
  return {
    // A stuck transaction's evidence names when it was last checked and by which load: instants and
    // serial ids, like the columns left out here.
    discrepancies: await rows(sql`select (to_jsonb(d) - 'discrepancy_id' - 'first_seen_at' - 'last_seen_at'
        - 'resolved_at' - 'updated_at' - 'created_at' - 'stake_cents' #- '{actual,last_checked_at}'
        #- '{actual,last_load,load_id}' #- '{actual,last_load,finished_at}'
        #- '{actual,last_status_lookup,looked_up_at}')::text as r
      from discrepancies d where resolved_at is null order by discrepancy_key`),
    returnMatches: await rows(sql`select concat_ws(' ', return_transaction_id, original_transaction_id,
        ledger_merchant_transaction_id, rule) as r from return_matches order by 1`),
    transactionMatches:
      await rows(sql`select concat_ws(' ', transaction_id, merchant_transaction_id, rule) as r
      from transaction_matches order by 1`),
    notificationMatches:
      await rows(sql`select concat_ws(' ', m.kind, m.target_id, n.delivery_key, m.first_received_at) as r
      from notification_matches m join notifications n using (notification_id) order by 1`),
  };
}

/** Eastern window end instants of the window workflows, in the order they closed. */
async function closingOrder(): Promise<string[]> {
  const closed: { from: string; at: number }[] = [];
  for (const w of splitWindows(FROM, TO, WINDOW_DAYS)) {
    const d = await server.client.workflow.getHandle(windowWorkflowId(w)).describe();
    closed.push({ from: w.from, at: d.closeTime!.getTime() });
  }
  return closed.sort((a, b) => a.at - b.at).map((c) => c.from);
}

describe('backfill order', () => {
  it('ends with the warehouse of a clean run when the first window finishes last', async () => {
    const clean = await backfill(1);
    expect(await closingOrder()).toEqual(['2026-01-01', '2026-01-11', '2026-01-21']);
    const reference = await matchingState(clean);
    // Returns in a later window than their original: the case that depends on the order.
    const crossing = await sql<{ n: number }>`
      select count(*)::int as n from provider_returns r join provider_transactions o on o.transaction_id = r.original_transaction_id
      where r.returned_on >= '2026-01-11' and o.transaction_on < '2026-01-11'`.execute(clean.db);
    expect(crossing.rows[0]!.n).toBeGreaterThan(3);
    expect(reference.returnMatches.length).toBeGreaterThan(10);

    sandbox.setFaults({ slowWindow: { from: FROM, ms: DELAY_MS } });
    let delayed: DatabaseHandle;
    try {
      delayed = await backfill(3);
    } finally {
      sandbox.setFaults({});
    }
    expect((await closingOrder()).at(-1)).toBe(FROM);
    expect(await tableChecksums(delayed, { lineage: false })).toEqual(
      await tableChecksums(clean, { lineage: false }),
    );
    const unlinked = await sql<{ n: number }>`
      select count(*)::int as n from return_matches m join provider_returns r using (return_transaction_id)
      join provider_transactions o on o.transaction_id = r.original_transaction_id
      where m.original_transaction_id is null`.execute(delayed.db);
    expect(unlinked.rows[0]!.n).toBe(0);
    const state = await matchingState(delayed);
    expect(state.returnMatches).toEqual(reference.returnMatches);
    expect(state.transactionMatches).toEqual(reference.transactionMatches);
    expect(state.notificationMatches).toEqual(reference.notificationMatches);
    expect(state.discrepancies).toEqual(reference.discrepancies);
  }, 180_000);
});
