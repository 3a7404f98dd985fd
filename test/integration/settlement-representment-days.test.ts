import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange, type ReconcileRequest } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { emptyReconRows, insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// A ledger REPRESENTMENT entry counts in the roll-forward on the day of the re-debit its transaction id
// names while that provider row is SUCCESSFUL, and on its own booking date otherwise (settlement_items,
// migration 0029). A write to the provider row alone (its status, its date) moves the entry between
// the two days: a run over changed keys must compute the roll-forward of the booking date too, as a full
// run does (reconcile/rules/returns-scope.ts, fillRollForwardDays). Found by the property test of
// reconcile-incremental.test.ts, seed 1000 (round 9: the entry's re-debit, outside the range, became
// PENDING inside it; the full run opened the booking date's settlement_unexplained, the run over
// changed keys did not).

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const RANGE: ReconcileRequest = { from: '2026-03-01', to: '2026-03-05', now: '2026-04-20T12:00:00Z' };
const BOOKED = '2026-03-03';
const KEY = `settlement_unexplained:${BOOKED}:CAD`;

/** The re-debit T-9, of `status` on `on`, and the ledger's REPRESENTMENT entry MP-9 naming it, booked on BOOKED. */
async function setUp(status: string, on: string): Promise<void> {
  await emptyReconRows(h.db);
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-1', notify_status: null },
    {
      transaction_id: 'T-9',
      merchant_transaction_id: 'M-9',
      status,
      transaction_on: on,
      notify_status: null,
    },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-1' },
    {
      merchant_transaction_id: 'MP-9',
      transaction_type: 'REPRESENTMENT',
      transaction_id: 'T-9',
      original_merchant_transaction_id: 'M-0',
      booked_at: `${BOOKED}T17:00:00Z`,
    },
  ]);
}

/** Whether the booking date's settlement_unexplained is open. */
async function unexplained(): Promise<boolean> {
  const r = await sql<{ n: number }>`select count(*)::int as n from discrepancies
    where discrepancy_key = ${KEY} and resolved_at is null`.execute(h.db);
  return r.rows[0]!.n > 0;
}

async function runOverChangedKeys(): Promise<void> {
  const run = await reconcileRange(h.db, RANGE);
  expect(run.scope).toBe('incremental');
}

describe('a REPRESENTMENT entry whose re-debit changed', () => {
  for (const cache of ['kept', 'emptied'] as const) {
    const emptied = async () => {
      // After a crash the unlogged kept items are empty (reconcile/rules/settlement-kept.ts).
      if (cache === 'emptied')
        await sql`truncate recon_work.settlement_kept_items, recon_work.settlement_kept_days,
          recon_work.settlement_kept_sums`.execute(h.db);
    };

    it(`counts on its booking date once the re-debit is no longer SUCCESSFUL (kept items ${cache})`, async () => {
      // The re-debit after the range: the entry counts on its day, outside the range.
      await setUp('SUCCESSFUL', '2026-03-20');
      await reconcileRange(h.db, RANGE);
      expect(await unexplained()).toBe(false);
      await sql`update provider_transactions set status = 'PENDING', raw_status = 'PENDING', transaction_on = '2026-03-02'
        where transaction_id = 'T-9'`.execute(h.db);
      await emptied();
      await runOverChangedKeys();
      expect(await unexplained()).toBe(true);
      await reconcileRange(h.db, { ...RANGE, full: true });
      expect(await unexplained()).toBe(true);
    });

    it(`leaves its booking date once the re-debit is SUCCESSFUL (kept items ${cache})`, async () => {
      await setUp('PENDING', '2026-03-02');
      await reconcileRange(h.db, RANGE);
      expect(await unexplained()).toBe(true);
      await sql`update provider_transactions set status = 'SUCCESSFUL', raw_status = 'SUCCESSFUL',
        transaction_on = '2026-03-20' where transaction_id = 'T-9'`.execute(h.db);
      await emptied();
      await runOverChangedKeys();
      expect(await unexplained()).toBe(false);
      await reconcileRange(h.db, { ...RANGE, full: true });
      expect(await unexplained()).toBe(false);
    });
  }
});
