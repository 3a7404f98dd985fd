import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import {
  insertLedger,
  insertLoad,
  insertTransactions,
  type LedgerInput,
  type TxnInput,
} from './recon-rows.ts';

/**
 * The rows the tolerance suites start from (docs/finance.md, "Tolerances and write-offs"): payins
 * whose ledger entries are one, three and nine cents over (T-A1, T-A3, T-A9), a fee one cent over the
 * contract (T-F1; the schedule: IBT DEBIT CAD, 25 cents from `feeValidFrom`), a ledger entry the
 * provider does not know, booked Monday 16 March (M-LATE), and each suite's own pair after the three
 * payins (`transaction`, `ledger`).
 */
export async function insertCentsApart(
  db: Kysely<Database>,
  own: { transaction: TxnInput; ledger: LedgerInput; feeValidFrom: string },
): Promise<void> {
  const load = await insertLoad(db, 'report-transactions');
  await insertTransactions(db, load, [
    { transaction_id: 'T-A1' },
    { transaction_id: 'T-A3' },
    { transaction_id: 'T-A9' },
    own.transaction,
    { transaction_id: 'T-F1', fee_cents: 26 },
  ]);
  await insertLedger(db, [
    { merchant_transaction_id: 'M-T-A1', amount_cents: 1001 },
    { merchant_transaction_id: 'M-T-A3', amount_cents: 1003 },
    { merchant_transaction_id: 'M-T-A9', amount_cents: 1009 },
    own.ledger,
    { merchant_transaction_id: 'M-T-F1' },
    // Booked Monday 16 March, unknown to the provider: due Wednesday 18 with the 2-day grace period.
    { merchant_transaction_id: 'M-LATE', booked_at: '2026-03-16T15:00:00Z' },
  ]);
  await db
    .insertInto('fee_schedule')
    .values({
      product: 'IBT',
      transaction_type: 'DEBIT',
      currency: 'CAD',
      fixed_cents: 25,
      valid_from: own.feeValidFrom,
    })
    .execute();
}
