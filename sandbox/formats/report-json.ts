import type { ReturnRecord, TransactionRecord } from '../../domain/records.ts';

/**
 * The JSON report of `POST /report/v4/report` (docs/provider-interface.md 4.1) written from normalised records. Records
 * are written one by one, so a million-row report never sits in memory: {@link reportJsonChunks}
 * yields the array piece by piece.
 */

/**
 * The fields a transaction record and a return record share, in the order the report writes them;
 * `transactionId` is the record's own id (a return's is its return transaction id).
 */
function reportRecordHead(
  r: TransactionRecord | ReturnRecord,
  transactionId: string,
): Record<string, unknown> {
  return {
    product: r.product,
    merchantId: r.merchant_id,
    merchantUserId: r.merchant_user_id,
    merchantTransactionId: r.merchant_transaction_id,
    productUserId: r.product_user_id,
    transactionId,
    transactionNotifyStatus: r.notify_status,
    transactionRegion: r.region,
    transactionAmount: r.amount_cents,
    currencyCode: r.currency,
    countryCode: r.country_code,
  };
}

/** A TRANSACTION report record (ReportResponse, docs/provider-interface.md 4.1) with the provider's field names. */
export function transactionToJson(r: TransactionRecord): Record<string, unknown> {
  return {
    ...reportRecordHead(r, r.transaction_id),
    transactionType: r.raw_transaction_type,
    transactionStatus: r.raw_status,
    transactionFee: r.fee_cents,
    transactionDateTime: r.transaction_at,
    externalReference: r.external_reference,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    transactionPaymentMethod: r.payment_method,
  };
}

/** A RETURN report record (docs/provider-interface.md 4.1). */
export function returnToJson(r: ReturnRecord): Record<string, unknown> {
  return {
    ...reportRecordHead(r, r.return_transaction_id),
    transactionType: r.raw_transaction_type ?? 'RETURN',
    originalTransactionId: r.original_transaction_id,
    originalTransactionType: r.original_transaction_type,
    originalTransactionDateTime: r.original_transaction_at,
    // A JSON return record has no externalReference of its own (docs/provider-interface.md 4.1 lists its fields).
    originalExternalReference: r.original_external_reference,
    reportDate: r.returned_on,
    returnCode: r.return_code,
    nextActionDate: r.raw_next_action_date,
    settlementCode: r.settlement_code,
  };
}

/** One record as the JSON report writes it. */
export function reportRecordToJson(r: TransactionRecord | ReturnRecord): Record<string, unknown> {
  return r.kind === 'transaction' ? transactionToJson(r) : returnToJson(r);
}

/**
 * The JSON report array, one record per line (`[\n{...},\n{...}\n]\n`), yielded in chunks of about
 * `chunkBytes` so that a writer does not pay per-record overhead.
 */
export async function* reportJsonChunks(
  records: Iterable<TransactionRecord | ReturnRecord> | AsyncIterable<TransactionRecord | ReturnRecord>,
  chunkBytes = 64 * 1024,
): AsyncGenerator<string> {
  let buffer = '[';
  let first = true;
  for await (const record of records) {
    buffer += `${first ? '\n' : ',\n'}${JSON.stringify(reportRecordToJson(record))}`;
    first = false;
    if (buffer.length >= chunkBytes) {
      yield buffer;
      buffer = '';
    }
  }
  yield `${buffer}${first ? '' : '\n'}]\n`;
}
