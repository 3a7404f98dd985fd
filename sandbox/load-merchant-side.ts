import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Database } from '../db/database.ts';
import type { Environment } from '../config/config.ts';
import { loadLedger } from '../ingest/load/load-ledger.ts';
import type { LoadSummary } from '../domain/load-summary.ts';
import { importNotificationHistory, type ImportSummary } from '../ingest/notifications/import-history.ts';
import type { FeeScheduleEntry, MerchantView } from './merchant-view.ts';

/**
 * The merchant's contracted fees of a sandbox view, written to fee_schedule. Writing them again (a
 * second `recon demo` on the same warehouse) sets the same contract: nothing is added twice.
 */
export async function insertFeeSchedule(
  db: Kysely<Database>,
  entries: readonly FeeScheduleEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  await db
    .insertInto('fee_schedule')
    .values(
      entries.map((f) => ({
        product: f.product,
        transaction_type: f.transactionType,
        currency: f.currency,
        fixed_cents: f.fixedCents,
        basis_points: f.basisPoints,
        rounding: f.rounding ?? 'half_up',
        valid_from: f.validFrom,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['product', 'transaction_type', 'currency', 'valid_from']).doUpdateSet((eb) => ({
        fixed_cents: eb.ref('excluded.fixed_cents'),
        basis_points: eb.ref('excluded.basis_points'),
        rounding: eb.ref('excluded.rounding'),
      })),
    )
    .execute();
}

/**
 * Loads the merchant side of a sandbox view the way a merchant would: the ledger through the loader
 * (NDJSON, as `recon ledger import` reads it), the contracted fee schedule, and the notification
 * history through the history import (with the original received_at). Used by `recon demo` and by the
 * end-to-end ground-truth test, so both see the same merchant side.
 */
export async function loadMerchantSide(
  handle: DatabaseHandle,
  view: MerchantView,
  environment: Environment,
  options: { feeSchedule?: boolean; account?: string } = {},
): Promise<{ ledger: LoadSummary; notifications: ImportSummary }> {
  // The provider account of the view's ledger entries (LedgerLoadRequest.account of the warehouse with accounts).
  const request = {
    fileName: 'sandbox-merchant-ledger.ndjson',
    origin: 'file' as const,
    environment,
    ...(options.account === undefined ? {} : { account: options.account }),
  };
  const ledger = await loadLedger(
    handle,
    request,
    Readable.from(view.ledger.map(({ kind: _kind, ...row }) => `${JSON.stringify(row)}\n`)),
  );
  // Several views of one merchant (one per provider account) share its fee schedule: loaded once.
  if (options.feeSchedule !== false) await insertFeeSchedule(handle.db, view.feeSchedule);
  const notifications = await importNotificationHistory(
    handle.db,
    Readable.from(view.notifications.map((n) => `${JSON.stringify(n)}\n`)),
    {
      fileName: 'sandbox-notifications.ndjson',
      ...(options.account === undefined ? {} : { account: options.account }),
    },
  );
  return { ledger, notifications };
}
