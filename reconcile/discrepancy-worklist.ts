/**
 * The worklist read from the terminal (`recon discrepancies list / show`): discrepancies filtered by
 * kind, status, currency and business date, and one discrepancy with its evidence (the provider row,
 * the ledger entry, the notifications) and its history (discrepancy_events). Read-only.
 *
 * Evidence leaves out raw lines, payloads and consumers' account fields (docs/security.md, "Personal
 * data"): what an analyst needs to judge a discrepancy is in the business columns.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { DiscrepancyRowFields } from './discrepancy-row.ts';

export const DISCREPANCY_STATUSES = ['open', 'acknowledged', 'resolved'] as const;

export interface DiscrepancyFilter {
  kind?: string;
  status?: (typeof DISCREPANCY_STATUSES)[number];
  currency?: string;
  /** Business dates from..to, both inclusive, YYYY-MM-DD. */
  from?: string;
  to?: string;
  /** At most this many rows, newest business date first. */
  limit?: number;
}

/** A worklist row: the common columns, with when it was last seen and acknowledged. */
export interface DiscrepancyRow extends DiscrepancyRowFields {
  business_date: string | null;
  last_seen_at: string;
  acknowledged_at: string | null;
}

const ROW_COLUMNS = [
  'discrepancy_id',
  'kind',
  'status',
  'business_date',
  'transaction_id',
  'merchant_transaction_id',
  'return_transaction_id',
  'currency',
  'expected_amount_cents',
  'actual_amount_cents',
  'difference_cents',
  'first_seen_at',
  'last_seen_at',
  'resolved_at',
  'acknowledged_at',
  'acknowledged_by',
  'note',
] as const;

/** Discrepancies matching every given filter, newest business date first, then by id. */
export async function listDiscrepancies(
  db: Kysely<Database>,
  filter: DiscrepancyFilter,
): Promise<DiscrepancyRow[]> {
  let query = db.selectFrom('discrepancies').select(ROW_COLUMNS);
  if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.currency !== undefined) query = query.where('currency', '=', filter.currency);
  if (filter.from !== undefined) query = query.where('business_date', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('business_date', '<=', filter.to);
  query = query.orderBy('business_date', (o) => o.desc().nullsLast()).orderBy('discrepancy_id');
  if (filter.limit !== undefined) query = query.limit(filter.limit);
  return (await query.execute()) as DiscrepancyRow[];
}

export interface DiscrepancyDetail {
  discrepancy: DiscrepancyRow & {
    discrepancy_key: string;
    rule: string;
    expected: unknown;
    actual: unknown;
    candidates: unknown;
  };
  evidence: {
    providerTransaction: Record<string, unknown> | null;
    providerReturn: Record<string, unknown> | null;
    ledgerEntry: Record<string, unknown> | null;
    notifications: Record<string, unknown>[];
  };
  events: { event_id: number; event: string; details: unknown; at: string }[];
}

/** One discrepancy with its evidence and history, or null when no discrepancy has this id. */
export async function discrepancyDetail(
  db: Kysely<Database>,
  discrepancyId: number,
): Promise<DiscrepancyDetail | null> {
  const row = await db
    .selectFrom('discrepancies')
    .select([...ROW_COLUMNS, 'discrepancy_key', 'rule', 'expected', 'actual', 'candidates'])
    .where('discrepancy_id', '=', discrepancyId)
    .executeTakeFirst();
  if (!row) return null;
  const d = row as DiscrepancyDetail['discrepancy'];
  const providerTransaction = d.transaction_id
    ? ((await db
        .selectFrom('provider_transactions')
        .select([
          'transaction_id',
          'merchant_transaction_id',
          'transaction_type',
          'status',
          'raw_status',
          'amount_cents',
          'fee_cents',
          'currency',
          'transaction_at',
          'transaction_on',
          'error_code',
          'notify_status',
          'source',
          'load_id',
        ])
        .where('transaction_id', '=', d.transaction_id)
        .executeTakeFirst()) ?? null)
    : null;
  const providerReturn = d.return_transaction_id
    ? ((await db
        .selectFrom('provider_returns')
        .select([
          'return_transaction_id',
          'original_transaction_id',
          'merchant_transaction_id',
          'return_code',
          'amount_cents',
          'currency',
          'returned_on',
          'next_action_date',
          'source',
          'load_id',
        ])
        .where('return_transaction_id', '=', d.return_transaction_id)
        .executeTakeFirst()) ?? null)
    : null;
  const mtid = d.merchant_transaction_id ?? providerTransaction?.merchant_transaction_id ?? null;
  const ledgerEntry = mtid
    ? ((await db
        .selectFrom('merchant_ledger')
        .select([
          'merchant_transaction_id',
          'transaction_id',
          'transaction_type',
          'amount_cents',
          'fee_cents',
          'currency',
          'status',
          'booked_at',
          'load_id',
        ])
        .where('merchant_transaction_id', '=', mtid)
        .executeTakeFirst()) ?? null)
    : null;
  const ids = [d.transaction_id, d.return_transaction_id].filter((x): x is string => x !== null);
  const notifications =
    ids.length > 0 || mtid
      ? await db
          .selectFrom('notifications')
          .select([
            'notification_id',
            'kind',
            'transaction_id',
            'merchant_transaction_id',
            'transaction_type',
            'status',
            'raw_status',
            'amount_cents',
            'fee_cents',
            'currency',
            'received_at',
            'delivery_count',
          ])
          .where((eb) =>
            eb.or([
              ...(ids.length > 0 ? [eb('transaction_id', 'in', ids)] : []),
              ...(mtid ? [eb('merchant_transaction_id', '=', mtid)] : []),
            ]),
          )
          .orderBy('received_at')
          .execute()
      : [];
  const events = await db
    .selectFrom('discrepancy_events')
    .select(['event_id', 'event', 'details', 'at'])
    .where('discrepancy_id', '=', discrepancyId)
    .orderBy('at')
    .orderBy('event_id')
    .execute();
  return {
    discrepancy: d,
    evidence: { providerTransaction, providerReturn, ledgerEntry, notifications },
    events: events as DiscrepancyDetail['events'],
  };
}
