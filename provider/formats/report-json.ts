import type {
  OnColumns,
  ParsedRow,
  ReportRecord,
  ReturnRecord,
  TransactionRecord,
} from '../../domain/records.ts';
import { UnreadableInput } from '../../domain/errors.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { describeJsonError } from '../../domain/privacy.ts';
import {
  currencyOf,
  dateOf,
  FieldProblem,
  instant,
  jsonCents,
  NonIntegerLiteral,
  nextActionDate,
  optionalInstant,
  optionalJsonCents,
  optionalText,
  reportStatus,
  requiredText,
  transactionType,
} from './report-fields.ts';
import { type FieldNames, reportRecordProblem } from './field-forms.ts';
import { splitJsonArray } from './split-json-array.ts';

/**
 * JSON report (docs/provider-interface.md 4.1): a top-level array mixing transaction records and return
 * records, told apart by their fields (transactionType RETURN, or any of originalTransactionId,
 * returnCode, reportDate, settlementCode). Read as a stream, one element in memory at a time.
 *
 * - An element that is valid JSON but does not validate (not an object, a missing or mistyped field)
 *   is a rejected row naming the field; unknown extra fields are tolerated (they stay in `raw`).
 * - JSON broken half-way (truncated, garbage, a syntax error) throws UnreadableInput naming the file
 *   and the line.
 * - `[]` yields nothing. An empty file throws UnreadableInput: the endpoint always sends an array, so
 *   an empty body means a failed transfer, not a report without records.
 */
export async function* parseReportJson(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
  onColumns?: OnColumns,
): AsyncGenerator<ParsedRow<ReportRecord>> {
  const extras: JsonExtras = { deviceType: false, requestType: false };
  // The columns are reported before the first record, and again before the first record that carries
  // a device or request type: the loader merges (and copies) rows while it reads, each with the
  // columns reported so far.
  const report = () => {
    if (!onColumns) return;
    const transactions: string[] = [...JSON_TRANSACTION_COLUMNS];
    if (extras.deviceType) transactions.push('device_type');
    if (extras.requestType) transactions.push('request_type');
    onColumns('transaction', transactions);
    onColumns('return', JSON_RETURN_COLUMNS);
  };
  report();
  for await (const batch of splitJsonArray(input, fileName)) {
    for (const element of batch) {
      let value: unknown;
      try {
        value = parseElement(element.text);
      } catch (error) {
        throw new UnreadableInput(
          fileName,
          element.line,
          `invalid JSON in the array element starting here: ${describeJsonError(error)}`,
        );
      }
      const { deviceType, requestType } = extras;
      const row = jsonRow(value, element.text, element.line, extras);
      if (extras.deviceType !== deviceType || extras.requestType !== requestType) report();
      yield row;
    }
  }
}

/**
 * The columns a JSON report carries (docs/provider-interface.md 4.1). A transaction record has no device type nor request
 * type (the CSV report has them): those columns are unknown unless an element of the file has the
 * field. A return record has no external reference of its own (only the original's) and no legacy
 * fields 8 and 9: a later CSV report fills the reference in without restating the return.
 */
const JSON_TRANSACTION_COLUMNS: readonly (keyof TransactionRecord)[] = [
  'transaction_id',
  'merchant_id',
  'merchant_transaction_id',
  'merchant_user_id',
  'product_user_id',
  'product',
  'transaction_type',
  'raw_transaction_type',
  'status',
  'raw_status',
  'amount_cents',
  'fee_cents',
  'currency',
  'transaction_at',
  'transaction_on',
  'local_time_flag',
  'error_code',
  'error_message',
  'notify_status',
  'region',
  'country_code',
  'payment_method',
  'external_reference',
  'raw',
];

const JSON_RETURN_COLUMNS: readonly (keyof ReturnRecord)[] = [
  'return_transaction_id',
  'original_transaction_id',
  'merchant_transaction_id',
  'merchant_id',
  'merchant_user_id',
  'product_user_id',
  'product',
  'return_code',
  'amount_cents',
  'currency',
  'returned_on',
  'report_date',
  'next_action_date',
  'raw_next_action_date',
  'settlement_code',
  'raw_transaction_type',
  'original_transaction_type',
  'original_transaction_at',
  'original_external_reference',
  'notify_status',
  'region',
  'country_code',
  'raw',
];

/** Fields outside docs/provider-interface.md 4.1 that the parser reads when an element has them. */
interface JsonExtras {
  deviceType: boolean;
  requestType: boolean;
}

/** Amount fields, whose number must be written as an integer: cents are never rounded from a float. */
const AMOUNT_KEYS = new Set(['transactionAmount', 'transactionFee']);
const INTEGER_LITERAL = /^(?:0|-?[1-9]\d*)$/;

/** An amount key and the number literal after it, as the text writes them. */
const AMOUNT_LITERALS = /"(?:transactionAmount|transactionFee)"\s*:\s*(-?[0-9][0-9.eE+-]*)/g;

/**
 * JSON.parse of one element, the amounts kept as their literals say (see keepAmountLiterals). A
 * reviver makes JSON.parse call back for every value: 9.6 µs an element against 1.7 µs without one,
 * measured on the report fixture's records, which was most of a JSON load's parsing. So the text is
 * parsed without it when the text shows that the reviver would change nothing: it has no `\u` escape
 * (the only way to write an amount key other than as its plain name) and every amount key's number
 * is written as an integer literal. Any other text, or any doubt, takes the reviver.
 */
function parseElement(text: string): unknown {
  if (text.includes('\\u')) return JSON.parse(text, keepAmountLiterals);
  for (const m of text.matchAll(AMOUNT_LITERALS)) {
    if (!INTEGER_LITERAL.test(m[1]!)) return JSON.parse(text, keepAmountLiterals);
  }
  return JSON.parse(text);
}

/**
 * JSON.parse reviver: an amount written as anything but an integer literal becomes a
 * {@link NonIntegerLiteral}, which the field check rejects naming the text as written. (JSON.parse alone
 * reads `1.0000000000000001` as 1 and `-0` as -0: both looked like valid integer cents.)
 */
function keepAmountLiterals(
  this: unknown,
  key: string,
  value: unknown,
  context?: { source?: string },
): unknown {
  if (typeof value === 'number' && AMOUNT_KEYS.has(key) && context?.source !== undefined) {
    if (!INTEGER_LITERAL.test(context.source)) return new NonIntegerLiteral(context.source);
  }
  return value;
}

/** Turns one parsed array element into a parsed row. */
export function jsonRow(
  value: unknown,
  raw: string,
  line: number,
  extras?: JsonExtras,
): ParsedRow<ReportRecord> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, line, raw, reason: 'array element is not a JSON object' };
  }
  const o = value as Record<string, unknown>;
  try {
    const record = isReturn(o) ? returnRecord(o, raw) : transactionRecord(o, raw);
    const problem = reportRecordProblem(record, JSON_NAMES);
    if (problem !== null) return { ok: false, line, raw, reason: problem };
    if (extras && record.kind === 'transaction') {
      if (o.deviceType !== undefined) extras.deviceType = true;
      if (o.requestType !== undefined) extras.requestType = true;
    }
    return { ok: true, line, raw, record };
  } catch (error) {
    if (error instanceof FieldProblem) return { ok: false, line, raw, reason: error.message };
    throw error;
  }
}

/** The JSON fields of the columns whose forms are checked (provider/formats/field-forms.ts). */
const JSON_NAMES: FieldNames = {
  merchant_transaction_id: 'merchantTransactionId',
  merchant_id: 'merchantId',
  merchant_user_id: 'merchantUserId',
  country_code: 'countryCode',
  region: 'transactionRegion',
  notify_status: 'transactionNotifyStatus',
  raw_transaction_type: 'transactionType',
  raw_status: 'transactionStatus',
};

function isReturn(o: Record<string, unknown>): boolean {
  return (
    o.transactionType === 'RETURN' ||
    o.originalTransactionId !== undefined ||
    o.returnCode !== undefined ||
    o.reportDate !== undefined ||
    o.settlementCode !== undefined
  );
}

function transactionRecord(o: Record<string, unknown>, raw: string): TransactionRecord {
  const rawType = requiredText('transactionType', o.transactionType);
  const rawStatus = requiredText('transactionStatus', o.transactionStatus);
  const at = instant('transactionDateTime', o.transactionDateTime);
  return {
    kind: 'transaction',
    transaction_id: requiredText('transactionId', o.transactionId),
    merchant_id: optionalText('merchantId', o.merchantId),
    merchant_transaction_id: optionalText('merchantTransactionId', o.merchantTransactionId),
    merchant_user_id: optionalText('merchantUserId', o.merchantUserId),
    product_user_id: optionalText('productUserId', o.productUserId),
    product: optionalText('product', o.product),
    transaction_type: transactionType(rawType),
    raw_transaction_type: rawType,
    status: reportStatus(rawStatus),
    raw_status: rawStatus,
    amount_cents: jsonCents('transactionAmount', o.transactionAmount),
    fee_cents: optionalJsonCents('transactionFee', o.transactionFee),
    currency: currencyOf('currencyCode', o.currencyCode),
    transaction_at: at,
    transaction_on: easternDateOf(at),
    local_time_flag: null,
    error_code: optionalText('errorCode', o.errorCode),
    // docs/provider-interface.md 4.1: the sample records name errorMessage errorDescription.
    error_message: optionalText('errorMessage', o.errorMessage ?? o.errorDescription),
    notify_status: optionalText('transactionNotifyStatus', o.transactionNotifyStatus),
    region: optionalText('transactionRegion', o.transactionRegion),
    country_code: optionalText('countryCode', o.countryCode),
    payment_method: optionalText('transactionPaymentMethod', o.transactionPaymentMethod),
    external_reference: optionalText('externalReference', o.externalReference),
    device_type: optionalText('deviceType', o.deviceType),
    request_type: optionalText('requestType', o.requestType),
    raw,
  };
}

function returnRecord(o: Record<string, unknown>, raw: string): ReturnRecord {
  const next = nextActionDate('nextActionDate', o.nextActionDate);
  // The return's date in this format (a CSV gives its Settlement Date, legacy its last-updated date).
  const reportDate =
    o.reportDate === undefined || o.reportDate === null ? null : dateOf('reportDate', o.reportDate);
  return {
    kind: 'return',
    return_transaction_id: requiredText('transactionId', o.transactionId),
    original_transaction_id: optionalText('originalTransactionId', o.originalTransactionId),
    merchant_transaction_id: optionalText('merchantTransactionId', o.merchantTransactionId),
    merchant_id: optionalText('merchantId', o.merchantId),
    merchant_user_id: optionalText('merchantUserId', o.merchantUserId),
    product_user_id: optionalText('productUserId', o.productUserId),
    product: optionalText('product', o.product),
    return_code: optionalText('returnCode', o.returnCode),
    amount_cents: jsonCents('transactionAmount', o.transactionAmount),
    currency: currencyOf('currencyCode', o.currencyCode),
    returned_on: reportDate,
    report_date: reportDate,
    settlement_date: null,
    last_updated_on: null,
    next_action_date: next.date,
    raw_next_action_date: next.raw,
    settlement_code: optionalText('settlementCode', o.settlementCode),
    raw_transaction_type: optionalText('transactionType', o.transactionType),
    original_transaction_type: optionalText('originalTransactionType', o.originalTransactionType),
    original_transaction_at: optionalInstant('originalTransactionDateTime', o.originalTransactionDateTime),
    original_external_reference: optionalText('originalExternalReference', o.originalExternalReference),
    // Not a field of a JSON return record (docs/provider-interface.md 4.1 lists them): unknown, not carried (see the columns).
    external_reference: null,
    notify_status: optionalText('transactionNotifyStatus', o.transactionNotifyStatus),
    region: optionalText('transactionRegion', o.transactionRegion),
    country_code: optionalText('countryCode', o.countryCode),
    legacy_field_8: null,
    legacy_field_9: null,
    raw,
  };
}
