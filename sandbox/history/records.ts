import type {
  AdjustmentRecord,
  LegacyTransactionRecord,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';
import { NOT_IN_LEGACY_RETURN } from '../../provider/formats/legacy/layout.ts';
import { easternWallTime, isoMicros } from '../formats/eastern-clock.ts';
import { LEGACY_CODES, type HistoryOptions, type HistoryTransaction, type Outcome } from './types.ts';

/** A history transaction as each source shows it: report and legacy records, returns, adjustments. */

const LEGACY_ERROR_CODES: Record<string, string> = {
  E101: '01',
  E302: '02',
  E205: '03',
  E500: '50',
  E110: '10',
};

/** Report-to-canonical status as the report API shows an outcome. */
function reportStatus(outcome: Outcome): 'SUCCESSFUL' | 'REJECTED' {
  return outcome === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'REJECTED';
}

export function toTransactionRecord(
  options: Required<HistoryOptions>,
  f: HistoryTransaction,
  asOfUs: number,
): TransactionRecord {
  const status = asOfUs < f.settledAtMicros ? 'PENDING' : reportStatus(f.outcome);
  return {
    kind: 'transaction',
    transaction_id: f.transactionId,
    merchant_id: options.merchantId,
    merchant_transaction_id: f.merchantTransactionId,
    merchant_user_id: f.merchantUserId,
    product_user_id: f.productUserId,
    product: 'IBT',
    transaction_type: f.type,
    raw_transaction_type: f.type,
    status,
    raw_status: status,
    amount_cents: f.amountCents,
    fee_cents: status === 'PENDING' ? 0 : f.feeCents,
    currency: f.currency,
    transaction_at: f.at,
    transaction_on: f.on,
    local_time_flag: null,
    error_code: status === 'PENDING' ? null : f.errorCode,
    error_message: status === 'PENDING' ? null : f.errorMessage,
    notify_status: status === 'PENDING' ? 'I' : f.notifyStatus,
    region: f.region,
    country_code: f.countryCode,
    payment_method: 'EFT',
    external_reference: f.externalReference,
    device_type: f.deviceType,
    request_type: f.requestType,
    raw: '',
  };
}

export function toReturnRecord(
  options: Required<HistoryOptions>,
  f: HistoryTransaction,
  legacy: boolean,
): ReturnRecord {
  const ret = f.return!;
  const common = {
    kind: 'return' as const,
    return_transaction_id: ret.returnTransactionId,
    original_transaction_id: f.transactionId,
    merchant_transaction_id: f.merchantTransactionId,
    merchant_user_id: f.merchantUserId,
    return_code: ret.returnCode,
    amount_cents: ret.amountCents,
    currency: f.currency,
    returned_on: ret.returnedOn,
    country_code: f.countryCode,
    raw: '',
  };
  if (legacy) {
    return {
      ...common,
      ...NOT_IN_LEGACY_RETURN,
      raw_transaction_type: LEGACY_CODES.returnCategory,
      legacy_field_8: null,
      legacy_field_9: null,
      last_updated_on: ret.returnedOn,
    };
  }
  return {
    ...common,
    merchant_id: options.merchantId,
    product_user_id: f.productUserId,
    product: 'IBT',
    next_action_date: ret.nextActionDate,
    raw_next_action_date: ret.nextActionDate,
    settlement_code: ret.settlementCode,
    raw_transaction_type: 'RETURN',
    original_transaction_type: f.type,
    original_transaction_at: f.at,
    original_external_reference: f.externalReference,
    external_reference: ret.externalReference,
    notify_status: ret.notifyStatus,
    region: f.region,
    legacy_field_8: null,
    legacy_field_9: null,
    // The sandbox's JSON reportDate and CSV Settlement Date are both the return's date.
    report_date: ret.returnedOn,
    settlement_date: ret.returnedOn,
    last_updated_on: null,
  };
}

export function toLegacyRecord(
  options: Required<HistoryOptions>,

  f: HistoryTransaction,
  queryType: '5' | '6',
  asOfUs: number,
): LegacyTransactionRecord {
  const wall = easternWallTime(f.atMicros);
  const secondUs = Math.floor(f.atMicros / 1_000_000) * 1_000_000;
  const returned = f.return && f.return.returnedAtMicros <= asOfUs ? f.return : null;
  return {
    kind: 'legacy-transaction',
    transaction_id: f.transactionId,
    transaction_on: wall.date,
    raw_transaction_type: LEGACY_CODES.transactionType[f.type],
    merchant_transaction_id: f.merchantTransactionId,
    amount_cents: f.amountCents + (f.legacyConflict ? 100 : 0),
    currency: f.currency,
    status: f.outcome === 'SUCCESSFUL' ? 'SUCCESSFUL' : 'FAILED',
    raw_status: LEGACY_CODES.status[f.outcome],
    internal_user_id: f.productUserId,
    fee_cents: f.feeCents,
    merchant_account_id: options.legacyMerchantId,
    error_code: f.errorCode ? (LEGACY_ERROR_CODES[f.errorCode] ?? null) : null,
    raw_notify_status: f.notifyStatus,
    merchant_user_id: f.merchantUserId,
    raw_transaction_time: wall.time,
    transaction_at: isoMicros(secondUs),
    local_time_flag: wall.fold ? 'dst_fold' : null,
    country_code: f.countryCode,
    consumer_email: f.consumerEmail,
    bank_account_masked: f.bankAccountMasked,
    // Field 18 is the return code of an EFT-routed payout: payins' returns are not shown there.
    return_code: returned && f.type === 'CREDIT' ? returned.returnCode : null,
    returned_on: queryType === '6' && returned && f.type === 'CREDIT' ? returned.returnedOn : null,
    completed_on: f.outcome === 'SUCCESSFUL' ? easternWallTime(f.settledAtMicros).date : null,
    payment_type: f.type === 'DEBIT' ? 'ETRANSFER' : null,
    network_reference: f.type === 'DEBIT' ? `CA${f.accountToken.slice(2, 14).toUpperCase()}` : null,
    query_type: queryType,
    raw: '',
  };
}

export function toAdjustmentRecord(
  options: Required<HistoryOptions>,
  f: HistoryTransaction,
): AdjustmentRecord {
  const a = f.adjustment!;
  return {
    kind: 'adjustment',
    // The warehouse key is the parser's hash of the fields plus the loader's occurrence number; the
    // generator's key only names the transaction and is not meant to be compared.
    adjustment_key: `sandbox:${f.transactionId}`,
    transaction_id: f.transactionId,
    raw_transaction_type: LEGACY_CODES.transactionType[f.type],
    adjustment_type: a.adjustmentType,
    amount_cents: a.amountCents,
    fee_cents: a.feeCents,
    currency: f.currency,
    adjusted_on: a.adjustedOn,
    merchant_account_id: options.legacyMerchantId,
    notes: a.notes,
    raw: '',
  };
}
