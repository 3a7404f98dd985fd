import { type Insertable, type Kysely, sql } from 'kysely';
import { normaliseNotification } from '../../ingest/notifications/normalise-notification.ts';
import { storeNotification } from '../../ingest/notifications/store-notification.ts';
import type { Database } from '../../db/database.ts';

/** Inserts rows straight into the warehouse for reconciliation tests (no parser, no loader). */
export async function insertLoad(
  db: Kysely<Database>,
  source: Insertable<Database['loads']>['source'],
  account = 'default',
): Promise<number> {
  const row = await db
    .insertInto('loads')
    .values({
      account,
      source,
      environment: 'staging',
      origin: 'direct',
      format: 'report-json',
      status: 'committed',
    })
    .returning('load_id')
    .executeTakeFirstOrThrow();
  return row.load_id;
}

export type TxnInput = Partial<Insertable<Database['provider_transactions']>> & { transaction_id: string };

export async function insertTransactions(
  db: Kysely<Database>,
  loadId: number,
  rows: TxnInput[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('provider_transactions')
    .values(
      rows.map((r) => ({
        merchant_transaction_id: `M-${r.transaction_id}`,
        product: 'IBT',
        transaction_type: 'DEBIT',
        raw_transaction_type: r.transaction_type ?? 'DEBIT',
        status: 'SUCCESSFUL',
        raw_status: r.status ?? 'SUCCESSFUL',
        amount_cents: 1000,
        fee_cents: 25,
        currency: 'CAD',
        transaction_at: '2026-03-02T15:00:00.000000Z',
        transaction_on: '2026-03-02',
        notify_status: 'C',
        source: 'report-transactions' as const,
        load_id: loadId,
        first_load_id: loadId,
        raw: '{}',
        ...r,
      })),
    )
    .execute();
}

export type LedgerInput = Partial<Insertable<Database['merchant_ledger']>> & {
  merchant_transaction_id: string;
};

export async function insertLedger(db: Kysely<Database>, rows: LedgerInput[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('merchant_ledger')
    .values(
      rows.map((r) => ({
        transaction_type: 'DEBIT',
        amount_cents: 1000,
        currency: 'CAD',
        status: 'SUCCESSFUL',
        booked_at: '2026-03-02T15:00:01Z',
        ...r,
      })),
    )
    .execute();
}

export type ReturnInput = Partial<Insertable<Database['provider_returns']>> & {
  return_transaction_id: string;
};

export async function insertReturns(
  db: Kysely<Database>,
  loadId: number,
  rows: ReturnInput[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('provider_returns')
    .values(
      rows.map((r) => ({
        amount_cents: 1000,
        currency: 'CAD',
        returned_on: '2026-03-04',
        return_code: '901',
        source: 'report-returns' as const,
        load_id: loadId,
        first_load_id: loadId,
        raw: '{}',
        ...r,
      })),
    )
    .execute();
}

/**
 * Stores a transaction notification as the receiver does (normalised, then stored): a SUCCESS DEBIT
 * of 1000 cents with a 25-cent fee unless `over` says otherwise (the body's transaction fields).
 */
export async function storeTestNotification(
  db: Kysely<Database>,
  transactionId: string,
  merchantTransactionId: string,
  over: Record<string, unknown> = {},
  receivedAt = '2026-03-02T15:00:05Z',
  kind: 'transaction' | 'return' = 'transaction',
  account?: string,
): Promise<void> {
  const body = {
    merchant: { merchantId: 'IBTMERCH0001', merchantTransactionId, merchantUserId: 'user-1' },
    accountInfo: { accountToken: 'tok-secret', accountLabel: '****1234', accountType: 'PC' },
    transaction: {
      transactionId,
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESS',
      transactionAmount: 1000,
      transactionFee: 25,
      currencyCode: 'CAD',
      ...over,
    },
  };
  const n = normaliseNotification(kind, body);
  if (!n.ok) throw new Error(n.reason);
  await storeNotification(db, account === undefined ? n.value : { ...n.value, account }, { receivedAt });
}

/**
 * Empties what a reconciliation case writes or reads: the provider and ledger rows, the claims, the
 * discrepancies and their runs, and recon_work's change log, matching state and the roll-forward's
 * kept items, days and sums, so that each case starts from an empty warehouse (loads are kept).
 */
export async function emptyReconRows(db: Kysely<Database>): Promise<void> {
  await sql`truncate provider_transactions, provider_adjustments, merchant_ledger, notifications,
    transaction_matches, notification_matches, discrepancies, discrepancy_events, discrepancy_totals,
    reconcile_runs cascade`.execute(db);
  await sql`truncate recon_work.data_changes, recon_work.matched_ranges, recon_work.matched_range_findings,
    recon_work.matched_days, recon_work.changed_keys, recon_work.settlement_kept_items,
    recon_work.settlement_kept_days, recon_work.settlement_kept_sums`.execute(db);
}
