import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Database } from '../../db/database.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { deriveMerchantView } from '../../sandbox/merchant-view.ts';
import { createTestDatabase } from './database.ts';
import { createLimitedAnalyst } from './limited-analyst.ts';
import { loadMerchantView } from './load-merchant-view.ts';
import { insertLedger, insertLoad, insertReturns, insertTransactions } from './recon-rows.ts';

/** The days of the odd settlement warehouse's history. */
export const ODD_RANGE = { from: '2026-12-20', to: '2027-01-03' } as const;

/**
 * A new test database with two accounts (ca-main, us-main) of sandbox history over ODD_RANGE, each
 * with the odd rows on 2026-12-28 and reconciled, and `login`, an analyst limited to ca-main.
 */
export async function createOddSettlementWarehouse(seed: number, login: string): Promise<DatabaseHandle> {
  const h = await createTestDatabase();
  const view = deriveMerchantView({ seed, transactions: 300, ...ODD_RANGE });
  for (const account of ['ca-main', 'us-main']) {
    await loadMerchantView(h.db, view, { account });
    await addOddSettlementRows(h.db, account, '2026-12-28');
    await reconcileRange(h.db, { ...view.range, now: view.asOf, account });
  }
  await createLimitedAnalyst(h.db, login, ['ca-main']);
  return h;
}

/** Rows the sandbox does not make: unknown type, pending, a re-debit of a returned payin, unpaired ledger entries. */
export async function addOddSettlementRows(
  db: Kysely<Database>,
  account: string,
  day: string,
): Promise<void> {
  const load = await insertLoad(db, 'report-transactions', account);
  const at = { account, transaction_on: day, transaction_at: `${day}T15:00:00Z` };
  await insertTransactions(db, load, [
    { ...at, transaction_id: `${account}-unknown`, transaction_type: null, raw_transaction_type: '7' },
    { ...at, transaction_id: `${account}-pending`, status: 'PENDING', raw_status: 'PENDING' },
    // The first payin of R-1 is returned on the day; the second, a day later, is its re-debit; a payout
    // with the same merchant transaction id stays a payout.
    { ...at, transaction_id: `${account}-first`, merchant_transaction_id: `${account}-R-1` },
    {
      ...at,
      transaction_id: `${account}-again`,
      merchant_transaction_id: `${account}-R-1`,
      transaction_on: '2026-12-29',
    },
    {
      ...at,
      transaction_id: `${account}-payout`,
      merchant_transaction_id: `${account}-R-1`,
      transaction_type: 'CREDIT',
      raw_transaction_type: 'CREDIT',
      transaction_on: '2026-12-29',
    },
  ]);
  await insertReturns(db, await insertLoad(db, 'report-returns', account), [
    {
      account,
      return_transaction_id: `${account}-ret`,
      original_transaction_id: `${account}-first`,
      returned_on: day,
    },
  ]);
  await insertLedger(db, [
    { account, merchant_transaction_id: `M-${account}-pending`, transaction_id: `${account}-pending` },
    { account, merchant_transaction_id: `${account}-L-alone`, booked_at: `${day}T18:00:00Z` },
    {
      account,
      merchant_transaction_id: `${account}-L-return`,
      transaction_type: 'RETURN',
      original_merchant_transaction_id: `${account}-L-alone`,
      booked_at: `${day}T19:00:00Z`,
    },
    {
      account,
      merchant_transaction_id: `${account}-L-adj`,
      transaction_type: 'ADJUSTMENT',
      amount_cents: -300,
      transaction_id: `${account}-first`,
      booked_at: `${day}T20:00:00Z`,
    },
  ]);
}
