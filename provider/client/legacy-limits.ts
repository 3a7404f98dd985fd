import type { LegacyQueryType } from '../../domain/records.ts';
import { LEGACY_QUERY_TYPES, MAX_WINDOW_DAYS } from '../../domain/sources.ts';
import { daysInclusive, isValidDate } from '../../domain/time/calendar.ts';
import { LegacyQueryRefused } from './errors.ts';

/** What a caller asks of the legacy query interface (docs/provider-interface.md 2.3). Dates are YYYY-MM-DD, inclusive. */
export interface LegacyQueryRequest {
  readonly queryType: LegacyQueryType;
  readonly from: string;
  readonly to: string;
  readonly merchantTransactionNumber?: string;
  /** response_fields, in column order (types 5 and 6 only). */
  readonly fields?: readonly number[];
}

const SIZES = { merchant_id: 8, merchant_pass: 20, merchant_txn_num: 30, response_fields: 110 } as const;
function compactDate(name: string, day: string): string {
  if (!isValidDate(day)) {
    throw new LegacyQueryRefused('date format', `${name} ${JSON.stringify(day)} is not a date YYYY-MM-DD`);
  }
  return day.replaceAll('-', '');
}

/**
 * Builds the form of a legacy query, checking every documented limit first (docs/provider-interface.md 2.3 and 5): range
 * of at most 40 days inclusive, field sizes, known query types and field numbers, no duplicate
 * fields, field 19 not with type 5, response_fields only for types 5 and 6. Each refusal is a
 * {@link LegacyQueryRefused} naming the limit; nothing is sent. The credentials are never echoed.
 */
export function buildLegacyForm(
  req: LegacyQueryRequest,
  credentials: { merchantId: string; merchantPass: string },
): URLSearchParams {
  if (!LEGACY_QUERY_TYPES.includes(req.queryType)) {
    throw new LegacyQueryRefused(
      'query_type',
      `query_type ${JSON.stringify(req.queryType)} is not one of the known types ${LEGACY_QUERY_TYPES.join(', ')}`,
    );
  }
  if (credentials.merchantId.length > SIZES.merchant_id) {
    throw new LegacyQueryRefused(
      'merchant_id size',
      `merchant_id has ${credentials.merchantId.length} characters; the limit is 8 (check RECON_LEGACY_MERCHANT_ID)`,
    );
  }
  if (credentials.merchantPass.length > SIZES.merchant_pass) {
    throw new LegacyQueryRefused(
      'merchant_pass size',
      `merchant_pass has more than 20 characters (check RECON_LEGACY_MERCHANT_PASS)`,
    );
  }
  const sdate = compactDate('query_sdate', req.from);
  const edate = compactDate('query_edate', req.to);
  const days = daysInclusive(req.from, req.to);
  if (days < 1) {
    throw new LegacyQueryRefused('date order', `query_edate ${req.to} is before query_sdate ${req.from}`);
  }
  if (days > MAX_WINDOW_DAYS) {
    throw new LegacyQueryRefused(
      'date range',
      `query_sdate..query_edate spans ${days} days; the limit is ${MAX_WINDOW_DAYS}`,
    );
  }
  const form = new URLSearchParams();
  form.set('merchant_id', credentials.merchantId);
  form.set('merchant_pass', credentials.merchantPass);
  form.set('query_type', req.queryType);
  form.set('query_sdate', sdate);
  form.set('query_edate', edate);
  if (req.merchantTransactionNumber !== undefined && req.merchantTransactionNumber !== '') {
    if (req.merchantTransactionNumber.length > SIZES.merchant_txn_num) {
      throw new LegacyQueryRefused(
        'merchant_txn_num size',
        `merchant_txn_num has ${req.merchantTransactionNumber.length} characters; the limit is 30`,
      );
    }
    form.set('merchant_txn_num', req.merchantTransactionNumber);
  }
  if (req.fields !== undefined) {
    if (req.queryType !== '5' && req.queryType !== '6') {
      throw new LegacyQueryRefused(
        'response_fields type',
        `response_fields applies only to query types 5 and 6, not ${req.queryType}`,
      );
    }
    if (req.fields.length === 0) {
      throw new LegacyQueryRefused(
        'response_fields empty',
        'response_fields is empty: omit it for the defaults',
      );
    }
    const unknown = req.fields.filter((n) => !Number.isInteger(n) || n < 1 || n > 22);
    if (unknown.length > 0) {
      throw new LegacyQueryRefused(
        'response_fields numbers',
        `response_fields holds unknown field number(s) ${unknown.join(', ')}; fields are 1 to 22`,
      );
    }
    const duplicates = req.fields.filter((n, k) => req.fields!.indexOf(n) !== k);
    if (duplicates.length > 0) {
      throw new LegacyQueryRefused(
        'response_fields duplicates',
        `response_fields lists field(s) ${[...new Set(duplicates)].join(', ')} more than once`,
      );
    }
    if (req.queryType === '5' && req.fields.includes(19)) {
      throw new LegacyQueryRefused(
        'field 19 with type 5',
        'field 19 (return date) is not valid for query type 5',
      );
    }
    const value = req.fields.join(',');
    if (value.length > SIZES.response_fields) {
      throw new LegacyQueryRefused(
        'response_fields size',
        `response_fields has ${value.length} characters; the limit is 110`,
      );
    }
    form.set('response_fields', value);
  }
  return form;
}
