import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { insertFeeSchedule } from '../../sandbox/load-merchant-side.ts';
import type { MerchantView } from '../../sandbox/merchant-view.ts';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { insertLoad } from './recon-rows.ts';

/** `recon reconcile` over a merchant view's range, as of its instant. */
export const reconcileViewArgs = (view: MerchantView): string[] => [
  'reconcile',
  '--from',
  view.range.from,
  '--to',
  view.range.to,
  '--now',
  view.asOf,
];

function chunks<T>(rows: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** Writes a merchant view into the warehouse: provider rows, legacy rows, adjustments, ledger, fee schedule, notifications. */
export async function loadMerchantView(
  db: Kysely<Database>,
  view: MerchantView,
  options: { account?: string; feeSchedule?: boolean } = {},
): Promise<void> {
  const account = options.account ?? 'default';
  const tLoad = await insertLoad(db, 'report-transactions', account);
  const rLoad = await insertLoad(db, 'report-returns', account);
  const gLoad = await insertLoad(db, 'legacy-transactions', account);
  const gRLoad = await insertLoad(db, 'legacy-returns', account);
  const aLoad = await insertLoad(db, 'legacy-adjustments', account);
  for (const part of chunks(view.providerTransactions)) {
    await db
      .insertInto('provider_transactions')
      .values(
        part.map(({ kind: _k, ...r }) => ({
          ...r,
          account,
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
          account,
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
      .values(part.map(({ kind: _k, ...r }) => ({ ...r, account, load_id: gLoad, first_load_id: gLoad })))
      .execute();
  }
  // As the loader does (ingest/load/merge-staging.ts): a legacy transaction without a report row
  // stands in provider_transactions, type and notification status raw; same for legacy returns.
  const reportIds = new Set(view.providerTransactions.map((t) => t.transaction_id));
  const legacyOnly = view.legacyTransactions.filter((g) => !reportIds.has(g.transaction_id));
  for (const part of chunks(legacyOnly)) {
    await db
      .insertInto('provider_transactions')
      .values(
        part.map((g) => ({
          transaction_id: g.transaction_id,
          merchant_id: g.merchant_account_id,
          merchant_transaction_id: g.merchant_transaction_id,
          merchant_user_id: g.merchant_user_id,
          product_user_id: g.internal_user_id,
          raw_transaction_type: g.raw_transaction_type!,
          status: g.status,
          raw_status: g.raw_status!,
          amount_cents: g.amount_cents!,
          fee_cents: g.fee_cents,
          currency: g.currency!,
          transaction_at: g.transaction_at,
          transaction_on: g.transaction_on,
          local_time_flag: g.local_time_flag,
          error_code: g.error_code,
          notify_status: g.raw_notify_status,
          country_code: g.country_code,
          raw: g.raw,
          account,
          source: 'legacy-transactions' as const,
          load_id: gLoad,
          first_load_id: gLoad,
        })),
      )
      .execute();
  }
  const reportReturnIds = new Set(view.providerReturns.map((r) => r.return_transaction_id));
  const legacyOnlyReturns = view.legacyReturns.filter((r) => !reportReturnIds.has(r.return_transaction_id));
  for (const part of chunks(legacyOnlyReturns)) {
    await db
      .insertInto('provider_returns')
      .values(
        part.map(({ kind: _k, ...r }) => ({
          ...r,
          account,
          source: 'legacy-returns' as const,
          load_id: gRLoad,
          first_load_id: gRLoad,
        })),
      )
      .execute();
  }
  for (const part of chunks(view.providerAdjustments)) {
    await db
      .insertInto('provider_adjustments')
      .values(
        part.map(({ kind: _k, ...a }) => ({
          ...a,
          account,
          source: 'legacy-adjustments' as const,
          load_id: aLoad,
          first_load_id: aLoad,
        })),
      )
      .execute();
  }
  for (const part of chunks(view.ledger)) {
    await db
      .insertInto('merchant_ledger')
      .values(
        part.map(({ kind: _k, merchant_id: _m, account: named, ...r }) => ({
          ...r,
          account: named ?? account,
        })),
      )
      .execute();
  }
  if (options.feeSchedule !== false) await insertFeeSchedule(db, view.feeSchedule);
  const lines = view.notifications.map((n) => `${JSON.stringify(n)}\n`);
  const summary = await importNotificationHistory(db, Readable.from(lines), { account });
  if (summary.quarantined !== view.quarantinedNotifications)
    throw new Error(
      `${summary.quarantined} sandbox notifications were refused, ${view.quarantinedNotifications} planted`,
    );
}
