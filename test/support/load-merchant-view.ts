import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { MerchantView } from '../../provider/sandbox/merchant-view.ts';
import { importNotificationHistory } from '../../reconcile/notifications/import-history.ts';
import { insertLoad } from './recon-rows.ts';

function chunks<T>(rows: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** Writes a merchant view into the warehouse: provider rows, legacy rows, ledger, fee schedule, notifications. */
export async function loadMerchantView(db: Kysely<Database>, view: MerchantView): Promise<void> {
  const tLoad = await insertLoad(db, 'report-transactions');
  const rLoad = await insertLoad(db, 'report-returns');
  const gLoad = await insertLoad(db, 'legacy-transactions');
  for (const part of chunks(view.providerTransactions)) {
    await db
      .insertInto('provider_transactions')
      .values(
        part.map(({ kind: _k, ...r }) => ({
          ...r,
          source: 'report-transactions' as const,
          load_id: tLoad,
          first_load_id: tLoad,
        })),
      )
      .execute();
  }
  for (const part of chunks(view.providerReturns)) {
    await db
      .insertInto('provider_returns')
      .values(
        part.map(({ kind: _k, ...r }) => ({
          ...r,
          source: 'report-returns' as const,
          load_id: rLoad,
          first_load_id: rLoad,
        })),
      )
      .execute();
  }
  for (const part of chunks(view.legacyTransactions)) {
    await db
      .insertInto('legacy_transactions')
      .values(part.map(({ kind: _k, ...r }) => ({ ...r, load_id: gLoad, first_load_id: gLoad })))
      .execute();
  }
  for (const part of chunks(view.ledger)) {
    await db
      .insertInto('merchant_ledger')
      .values(part.map(({ kind: _k, ...r }) => r))
      .execute();
  }
  await db
    .insertInto('fee_schedule')
    .values(
      view.feeSchedule.map((f) => ({
        product: f.product,
        transaction_type: f.transactionType,
        currency: f.currency,
        fixed_cents: f.fixedCents,
        basis_points: f.basisPoints,
        rounding: f.rounding ?? 'half_up',
        valid_from: f.validFrom,
      })),
    )
    .execute();
  const lines = view.notifications.map((n) => `${JSON.stringify(n)}\n`);
  const summary = await importNotificationHistory(db, Readable.from(lines));
  if (summary.quarantined > 0) throw new Error(`${summary.quarantined} sandbox notifications were refused`);
}
