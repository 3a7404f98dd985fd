import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import {
  insertLedger,
  insertLoad,
  insertTransactions,
  storeTestNotification,
} from '../support/recon-rows.ts';

// Over most of the history want_nm holds only the transactions of more than one notification body,
// counted in a statement of their own, and facts joins the others' one body itself
// (reconcile/rules/latest-notifications.ts). Each statement of a run reads its own snapshot: a body
// committed between the count and facts' join would make two facts of one transaction, and the run
// would fail on the notification claims' unique target. The run must see it and make facts again.

const race = vi.hoisted(() => ({
  write: undefined as (() => Promise<void>) | undefined,
  made: [] as string[],
}));
vi.mock('../../reconcile/rules/work-tables.ts', async (original) => {
  const m = await original<typeof import('../../reconcile/rules/work-tables.ts')>();
  return {
    ...m,
    createWorkTable: async (...a: Parameters<typeof m.createWorkTable>) => {
      race.made.push(a[1]);
      const write = race.write;
      if (a[1] === 'facts' && write) {
        race.write = undefined;
        await write();
      }
      return m.createWorkTable(...a);
    },
  };
});

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [{ transaction_id: 'T-1' }, { transaction_id: 'T-2' }]);
  await insertLedger(h.db, [{ merchant_transaction_id: 'M-T-1' }, { merchant_transaction_id: 'M-T-2' }]);
  await storeTestNotification(h.db, 'T-1', 'M-T-1', {}, '2026-03-02T15:00:05Z');
  await storeTestNotification(h.db, 'T-2', 'M-T-2', {}, '2026-03-02T15:00:05Z');
  // want_nm is sparse only once notifications has statistics (sparseLatest).
  await sql`analyze notifications`.execute(h.db);
});
afterAll(async () => h.close());

describe('the latest notifications of a full run over most of the history', () => {
  it('are made again when a second body of a transaction commits during the run', async () => {
    // Committed by another connection after nm_several was counted, before facts is made.
    race.write = () =>
      storeTestNotification(h.db, 'T-1', 'M-T-1', { transactionStatus: 'FAILED' }, '2026-03-02T15:00:09Z');
    const run = await reconcileRange(h.db, {
      from: '2026-03-01',
      to: '2026-03-31',
      now: '2026-04-20T12:00:00Z',
      full: true,
    });
    expect(race.write).toBeUndefined();
    // The sparse want_nm, then want_nm of every transaction and facts again.
    expect(race.made.filter((t) => ['nm_several', 'want_nm', 'facts'].includes(t))).toEqual([
      'nm_several',
      'want_nm',
      'facts',
      'want_nm',
      'facts',
    ]);
    expect(run.matched.notifications).toBe(2);
    const claims = await sql<{ target_id: string; status: string; first: string }>`
      select m.target_id, n.status, m.first_received_at::text as first from notification_matches m
      join notifications n using (notification_id) order by 1`.execute(h.db);
    expect(claims.rows).toEqual([
      { target_id: 'T-1', status: 'FAILED', first: '2026-03-02 15:00:05+00' },
      { target_id: 'T-2', status: 'SUCCESSFUL', first: '2026-03-02 15:00:05+00' },
    ]);
    // Its history says both a success and a failure.
    const found = await sql<{ discrepancy_key: string }>`select discrepancy_key from discrepancies
      where transaction_id = 'T-1' order by 1`.execute(h.db);
    expect(found.rows.map((r) => r.discrepancy_key)).toContain('notification_contradiction:T-1');
  });
});
