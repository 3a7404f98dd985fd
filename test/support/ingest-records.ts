import { Readable } from 'node:stream';
import type {
  AdjustmentRecord,
  AnyRecord,
  LedgerRecord,
  LegacyTransactionRecord,
  ParsedRow,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';
import type { Db } from '../../db/database.ts';
import type { LoadRequest } from '../../ingest/load/load-report.ts';
import { LEGACY_DEFAULT_FIELDS, legacyTransactionLine } from '../../sandbox/formats/legacy-csv.ts';
import { sql } from 'kysely';

/** Hand-made normalised records for loader tests (what a parser would yield). */
export function transaction(over: Partial<TransactionRecord> = {}): TransactionRecord {
  return {
    kind: 'transaction',
    transaction_id: 'T1',
    merchant_id: 'M1',
    merchant_transaction_id: 'MT1',
    merchant_user_id: 'USR1',
    product_user_id: 'P1',
    product: 'IBT',
    transaction_type: 'DEBIT',
    raw_transaction_type: 'DEBIT',
    status: 'SUCCESSFUL',
    raw_status: 'SUCCESSFUL',
    amount_cents: 2015,
    fee_cents: 25,
    currency: 'CAD',
    transaction_at: '2026-03-08T07:30:00.123456Z',
    transaction_on: '2026-03-08',
    local_time_flag: null,
    error_code: null,
    error_message: null,
    notify_status: 'C',
    region: 'ON',
    country_code: 'CA',
    payment_method: 'EFT',
    external_reference: 'X1',
    device_type: null,
    request_type: null,
    raw: '{"transactionId":"T1"}',
    ...over,
  };
}

export function legacyTransaction(over: Partial<LegacyTransactionRecord> = {}): LegacyTransactionRecord {
  return {
    kind: 'legacy-transaction',
    transaction_id: 'T1',
    transaction_on: '2026-03-08',
    raw_transaction_type: 'P',
    merchant_transaction_id: 'MT1',
    amount_cents: 2015,
    currency: 'CAD',
    status: 'SUCCESSFUL',
    raw_status: 'S',
    internal_user_id: 'P1',
    fee_cents: 25,
    merchant_account_id: 'M1',
    error_code: null,
    raw_notify_status: 'Y',
    merchant_user_id: 'USR1',
    raw_transaction_time: '023000',
    transaction_at: '2026-03-08T07:30:00Z',
    local_time_flag: null,
    country_code: 'CA',
    consumer_email: 'a@example.com',
    bank_account_masked: 'xxx-xxxxx-1234',
    return_code: null,
    returned_on: null,
    completed_on: null,
    payment_type: null,
    network_reference: null,
    query_type: '5',
    raw: '20260308,P,MT1,T1,2015,CAD,S',
    ...over,
  };
}

export function returnRecord(over: Partial<ReturnRecord> = {}): ReturnRecord {
  return {
    kind: 'return',
    return_transaction_id: 'R1',
    original_transaction_id: 'T1',
    merchant_transaction_id: 'MT1',
    merchant_id: 'M1',
    merchant_user_id: 'USR1',
    product_user_id: 'P1',
    product: 'IBT',
    return_code: '901',
    amount_cents: 2015,
    currency: 'CAD',
    returned_on: '2026-03-10',
    next_action_date: '2026-03-15',
    raw_next_action_date: '2026-03-15',
    settlement_code: 'S1',
    raw_transaction_type: 'RETURN',
    original_transaction_type: 'DEBIT',
    original_transaction_at: '2026-03-08T07:30:00.123456Z',
    original_external_reference: 'X1',
    external_reference: 'XR1',
    notify_status: 'C',
    region: 'ON',
    country_code: 'CA',
    legacy_field_8: null,
    legacy_field_9: null,
    report_date: '2026-03-10',
    settlement_date: null,
    last_updated_on: null,
    raw: '{"transactionId":"R1"}',
    ...over,
  };
}

export function adjustment(over: Partial<AdjustmentRecord> = {}): AdjustmentRecord {
  return {
    kind: 'adjustment',
    adjustment_key: 'a'.repeat(64),
    transaction_id: 'T1',
    raw_transaction_type: 'A',
    adjustment_type: 'F',
    amount_cents: -500,
    fee_cents: 0,
    currency: 'CAD',
    adjusted_on: '2026-03-09',
    merchant_account_id: 'M1',
    notes: 'fee reversal',
    raw: '20260309,A,F,T1,-500,CAD,0,M1,fee reversal',
    ...over,
  };
}

export function ledgerEntry(over: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    kind: 'ledger',
    merchant_transaction_id: 'MT1',
    transaction_type: 'DEBIT',
    amount_cents: 2015,
    currency: 'CAD',
    status: 'SUCCESSFUL',
    booked_at: '2026-03-08T07:31:00Z',
    transaction_id: 'T1',
    original_merchant_transaction_id: null,
    merchant_user_id: 'USR1',
    product: 'IBT',
    fee_cents: 25,
    description: null,
    ...over,
  };
}

type Item = AnyRecord | { reject: string; raw?: string } | Error;

/**
 * A stand-in parser: consumes the input stream (so the loader can hash it) and yields the given rows,
 * one per line from line 2 (line 1 being a header). An Error item is thrown at that point, as a
 * parser does for a file broken half-way.
 */
export function fakeParser(items: Item[]) {
  return async function* (input: Readable): AsyncIterable<ParsedRow<AnyRecord>> {
    for await (const _chunk of input) {
      // drain
    }
    let line = 1;
    for (const item of items) {
      line++;
      if (item instanceof Error) throw item;
      if ('reject' in item)
        yield { ok: false, line, raw: item.raw ?? `bad line ${line}`, reason: item.reject };
      else yield { ok: true, line, raw: 'raw' in item ? String(item.raw) : '', record: item };
    }
  };
}

/** A load of a JSON report file of transactions (staging); `over` changes any field. */
export const reportRequest = (over: Partial<LoadRequest> = {}): LoadRequest => ({
  source: 'report-transactions',
  format: 'report-json',
  queryType: 'TRANSACTION',
  fileName: 'report.json',
  origin: 'file',
  environment: 'staging',
  ...over,
});

export const bytesOf = (text: string) => Readable.from([Buffer.from(text)]);

/** A legacy type 5 file (the default fields) of `records`, a line each. */
export const legacyType5File = (records: readonly LegacyTransactionRecord[]) =>
  bytesOf(records.map((r) => legacyTransactionLine(r, LEGACY_DEFAULT_FIELDS['5'])).join(''));

/** A load of a legacy type 5 transactions file; `over` changes any field. */
export const legacyType5Request = (over: Partial<LoadRequest> = {}): LoadRequest =>
  reportRequest({ source: 'legacy-transactions', format: 'legacy', queryType: '5', ...over });

export const WAREHOUSE_TABLES = [
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'provider_adjustments',
  'merchant_ledger',
  'row_history',
  'rejected_rows',
] as const;

/** Staging tables that exist now (the loader's, in recon_work): none once every load has ended. */
export async function stagingTableCount(db: Db): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from pg_tables
    where schemaname = 'recon_work' and tablename like 'ingest\\_staging\\_%'`.execute(db);
  return r.rows[0]!.n;
}

/** md5 over every row of every warehouse table (all columns, lineage and timestamps included). */
export async function warehouseChecksum(db: Db): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of WAREHOUSE_TABLES) {
    const r = await sql<{
      sum: string | null;
    }>`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as sum from ${sql.table(table)} t`.execute(
      db,
    );
    out[table] = r.rows[0]!.sum ?? '';
  }
  return out;
}

/** The row_history rows a load wrote (the stored versions it replaced), by key. */
export async function rowHistoryOf(db: Db, loadId: number) {
  return db
    .selectFrom('row_history')
    .select(['table_name', 'row_key', 'previous', 'changed_columns'])
    .where('load_id', '=', loadId)
    .orderBy('table_name')
    .orderBy('row_key')
    .execute();
}
