import type { ReturnRecord, TransactionRecord } from '../../domain/records.ts';
import { RETURN_CSV_HEADER, TRANSACTION_CSV_HEADER } from '../../provider/formats/report-csv-headers.ts';
import { csvLine } from './csv-field.ts';

/**
 * The CSV output of the report endpoint (docs/provider-interface.md 4.2): a header row, then one row per record. Dates
 * and times are written as in the JSON report (ISO 8601 UTC with microseconds; the provider does not
 * show its CSV date format), amounts and fees in cents.
 */

export function transactionCsvRow(r: TransactionRecord): string {
  return csvLine([
    r.transaction_at,
    r.raw_transaction_type,
    r.merchant_transaction_id,
    r.transaction_id,
    r.amount_cents,
    r.currency,
    r.raw_status,
    r.product_user_id,
    r.fee_cents,
    r.merchant_id,
    r.request_type,
    r.payment_method,
    r.merchant_user_id,
    r.error_code,
    r.error_message,
    r.country_code,
    r.device_type,
    r.external_reference,
    r.product,
    r.notify_status,
    r.region,
  ]);
}

export function returnCsvRow(r: ReturnRecord): string {
  return csvLine([
    r.returned_on,
    r.settlement_code,
    r.return_code,
    r.merchant_transaction_id,
    r.return_transaction_id,
    r.amount_cents,
    r.raw_next_action_date,
    r.raw_transaction_type ?? 'RETURN',
    r.merchant_id,
    null,
    r.country_code,
    r.currency,
    null,
    r.merchant_user_id,
    r.external_reference,
    r.original_transaction_at,
    r.original_transaction_id,
    r.product,
    r.product_user_id,
    r.notify_status,
    r.region,
  ]);
}

/** The CSV report of one query type, header first, in chunks of about `chunkBytes`. */
export async function* reportCsvChunks(
  queryType: 'TRANSACTION' | 'RETURN',
  records: Iterable<TransactionRecord | ReturnRecord> | AsyncIterable<TransactionRecord | ReturnRecord>,
  chunkBytes = 64 * 1024,
): AsyncGenerator<string> {
  let buffer = csvLine(queryType === 'TRANSACTION' ? TRANSACTION_CSV_HEADER : RETURN_CSV_HEADER);
  for await (const r of records) {
    buffer += r.kind === 'transaction' ? transactionCsvRow(r) : returnCsvRow(r);
    if (buffer.length >= chunkBytes) {
      yield buffer;
      buffer = '';
    }
  }
  yield buffer;
}
