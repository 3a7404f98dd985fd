import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { actOnDiscrepancy } from '../../reconcile/discrepancies/actions.ts';
import { reconcileRange, type ReconcileRequest } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { emptyReconRows, insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// A person's resolution or reopening of a discrepancy notes its keys in the change log, so that the
// next run over changed keys looks at it as a full run does (migration 0027). A settlement_unexplained
// discrepancy names no key (a day and a currency): its date is noted instead (migration 0059), and
// the run computes that day's roll-forward. Found by the property test of reconcile-incremental, seed
// 2010 (round 3: a person reopened a settlement_unexplained the day no longer had; the full run
// resolved it again, the run over changed keys left it open).

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const RANGE: ReconcileRequest = { from: '2026-03-01', to: '2026-03-05', now: '2026-04-20T12:00:00Z' };
const DAY = '2026-03-03';
const KEY = `settlement_unexplained:${DAY}:CAD`;

async function theDay(): Promise<{ id: number; status: string } | undefined> {
  const r = await sql<{ id: number; status: string }>`select discrepancy_id as id, status from discrepancies
    where discrepancy_key = ${KEY}`.execute(h.db);
  return r.rows[0];
}

describe("a person's action on a settlement_unexplained discrepancy", () => {
  for (const full of [false, true])
    it(`is looked at by the next run ${full ? 'in full' : 'over changed keys'}`, async () => {
      await emptyReconRows(h.db);
      const load = await insertLoad(h.db, 'report-transactions');
      await insertTransactions(h.db, load, [
        { transaction_id: 'T-1', transaction_on: DAY, notify_status: null },
      ]);
      // A ledger adjustment the provider never made: money the day's discrepancies do not explain.
      await insertLedger(h.db, [
        { merchant_transaction_id: 'M-T-1', booked_at: `${DAY}T15:00:01Z` },
        {
          merchant_transaction_id: 'MA-1',
          transaction_type: 'ADJUSTMENT',
          amount_cents: 300,
          booked_at: `${DAY}T17:00:00Z`,
        },
      ]);
      await reconcileRange(h.db, RANGE);
      expect(await theDay()).toMatchObject({ status: 'open' });
      await sql`delete from merchant_ledger where merchant_transaction_id = 'MA-1'`.execute(h.db);
      expect((await reconcileRange(h.db, RANGE)).scope).toBe('incremental');
      expect(await theDay()).toMatchObject({ status: 'resolved' });
      // Reopened by a person: the day balances, so the next run resolves it again.
      await actOnDiscrepancy(
        h.db,
        (await theDay())!.id,
        { action: 'reopen', note: 'again' },
        {
          name: 'ana',
          at: '2026-04-20T11:00:00Z',
        },
      );
      expect(await theDay()).toMatchObject({ status: 'open' });
      const run = await reconcileRange(h.db, { ...RANGE, full });
      expect(run.scope).toBe(full ? 'full' : 'incremental');
      expect(await theDay()).toMatchObject({ status: 'resolved' });
    });
});
