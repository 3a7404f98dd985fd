/**
 * Three CAD transactions whose ledger entries are 1, 3 and 9 cents more (T-A1, T-A3, T-A9 on
 * 2026-03-02), reconciled as of {@link AMOUNTS_AS_OF}, the 9-cent one resolved by a person (ann) as
 * accepted: what a proposal of a 1-cent tolerance and a 5-cent write-off limit would close (T-A1),
 * write off (T-A3) and agree with (T-A9).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { insertLedger, insertLoad, insertTransactions } from './recon-rows.ts';

export const AMOUNTS_AS_OF = '2026-03-20T12:00:00Z';

export async function seedAmountDifferences(db: Kysely<Database>): Promise<void> {
  const load = await insertLoad(db, 'report-transactions');
  await insertTransactions(
    db,
    load,
    [1, 3, 9].map((d) => ({ transaction_id: `T-A${d}` })),
  );
  await insertLedger(
    db,
    [1, 3, 9].map((d) => ({ merchant_transaction_id: `M-T-A${d}`, amount_cents: 1000 + d })),
  );
  await reconcileRange(db, { from: '2026-03-01', to: '2026-03-20', now: AMOUNTS_AS_OF });
  await sql`update discrepancies set status = 'resolved', resolved_at = ${AMOUNTS_AS_OF}::timestamptz,
    resolution = 'accepted', resolved_by = 'ann' where discrepancy_key = 'amount_mismatch:T-A9'`.execute(db);
}
