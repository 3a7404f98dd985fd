import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// The claim inserts (reconcile/rules/claims.ts) leave out their check against the claims already held
// only when the account holds none. When it holds some, the check is what keeps a run from taking a
// ledger entry that a provider row of another range still claims: that range's run is the one that
// lets it go. Without the check the insert breaks transaction_matches' unique merchant transaction id
// and the run fails.

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const claims = async () =>
  (
    await sql<{ transaction_id: string; merchant_transaction_id: string }>`
      select transaction_id, merchant_transaction_id from transaction_matches order by 1`.execute(h.db)
  ).rows;

describe('the claim inserts when the account already holds claims', () => {
  it("leave a ledger entry that a row of another range claims to that range's run", async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    // T-OLD, on the 5th, claims M-1 in a run of the 5th.
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-OLD', merchant_transaction_id: 'M-1', transaction_on: '2026-03-05' },
    ]);
    await insertLedger(h.db, [{ merchant_transaction_id: 'M-1' }, { merchant_transaction_id: 'M-2' }]);
    const day5 = { from: '2026-03-05', to: '2026-03-05', now: '2026-04-20T12:00:00Z' };
    await reconcileRange(h.db, day5);
    expect(await claims()).toEqual([{ transaction_id: 'T-OLD', merchant_transaction_id: 'M-1' }]);

    // T-OLD now carries M-2, and T-NEW, on the 2nd, carries M-1: M-1 is no duplicate (one provider
    // row carries it), so nothing but the check sees that T-OLD still claims it.
    await sql`update provider_transactions set merchant_transaction_id = 'M-2' where transaction_id = 'T-OLD'`.execute(
      h.db,
    );
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-NEW', merchant_transaction_id: 'M-1', transaction_on: '2026-03-02' },
    ]);
    const day2 = { from: '2026-03-02', to: '2026-03-02', now: '2026-04-21T12:00:00Z' };
    const run = await reconcileRange(h.db, day2);
    expect(run.fullBecause).toBe('first run of these dates');
    expect(run.matched.transactions).toBe(1);
    expect(await claims()).toEqual([{ transaction_id: 'T-OLD', merchant_transaction_id: 'M-1' }]);

    // The run of the 5th lets M-1 go and claims M-2; then the 2nd's run claims M-1.
    await reconcileRange(h.db, { ...day5, now: '2026-04-22T12:00:00Z' });
    await reconcileRange(h.db, { ...day2, now: '2026-04-23T12:00:00Z' });
    expect(await claims()).toEqual([
      { transaction_id: 'T-NEW', merchant_transaction_id: 'M-1' },
      { transaction_id: 'T-OLD', merchant_transaction_id: 'M-2' },
    ]);
  });
});
