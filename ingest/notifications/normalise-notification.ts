/**
 * Pure validation and normalisation of notification bodies (docs/provider-interface.md 5 and 6).
 * Limits the spec states are enforced (lengths, ranges, integer types); what it leaves unshown is
 * tolerated and kept raw: which fields are required, the values of enums beyond those listed, the
 * return-specific fields. Assumption (docs/provider-interface.md 6): transactionAmount and transactionFee
 * are read as cents, as in the reports; raw_amount keeps the value exactly as sent.
 */

import { createHash } from 'node:crypto';
import { canonicalProviderStatus } from '../../domain/status.ts';

export type NotificationKind = 'transaction' | 'return';

export interface NormalisedNotification {
  /** Account the notification is filed under (notification-account.ts); 'default' when unset. */
  account?: string;
  kind: NotificationKind;
  delivery_key: string;
  transaction_id: string;
  merchant_transaction_id: string | null;
  merchant_id: string | null;
  merchant_user_id: string | null;
  transaction_type: 'DEBIT' | 'CREDIT' | null;
  raw_transaction_type: string | null;
  status: 'SUCCESSFUL' | 'PENDING' | 'REJECTED' | 'FAILED' | 'RETURNED' | null;
  raw_status: string | null;
  amount_cents: number | null;
  raw_amount: string | null;
  fee_cents: number | null;
  currency: string | null;
  error_code: string | null;
  return_code: string | null;
  raw_next_action_date: string | null;
  account_token: string | null;
  account_label: string | null;
  payload: unknown;
}

export type NormaliseResult = { ok: true; value: NormalisedNotification } | { ok: false; reason: string };

/** JSON with object keys sorted at every level: the same body always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 of the kind and the canonical body: identical deliveries share it. */
export function deliveryKey(kind: NotificationKind, body: unknown): string {
  return createHash('sha256')
    .update(`${kind}\n${canonicalJson(body)}`)
    .digest('hex');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

class Invalid extends Error {}

function str(
  obj: Record<string, unknown>,
  path: string,
  key: string,
  min?: number,
  max?: number,
): string | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new Invalid(`${path}.${key} must be a string`);
  if (min !== undefined && v.length < min)
    throw new Invalid(`${path}.${key} is ${v.length} characters; the minimum is ${min}`);
  if (max !== undefined && v.length > max)
    throw new Invalid(`${path}.${key} is ${v.length} characters; the maximum is ${max}`);
  return v;
}

function int(obj: Record<string, unknown>, path: string, key: string): { value: number; raw: string } | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return { value: v, raw: String(v) };
  // The spec types these fields as integers (2.1, 2.3): a string, even of digits, is refused, so that a
  // sender that changed its encoding is noticed in the quarantine instead of being read silently.
  const shown = typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 20))}` : JSON.stringify(v);
  throw new Invalid(`${path}.${key} must be a JSON integer, got ${String(shown).slice(0, 40)}`);
}

/** A UTF-16 surrogate without its pair: not Unicode text, and not encodable as UTF-8. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Deepest nesting of arrays and objects accepted; the spec's bodies are 2 levels deep. */
export const MAX_NOTIFICATION_DEPTH = 32;

/**
 * Refuses what PostgreSQL cannot store faithfully, anywhere in the body (keys included): NUL (text
 * and jsonb reject it), lone UTF-16 surrogates (not encodable as UTF-8: they would be replaced
 * silently), and nesting deeper than MAX_NOTIFICATION_DEPTH. Iterative, so any depth is safe to check.
 */
export function unstorableContent(body: unknown): string | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '$', depth: 0 }];
  const text = (s: string, where: string): string | null => {
    if (s.includes('\u0000')) return `${where} contains a NUL character (\\u0000), which cannot be stored`;
    if (LONE_SURROGATE.test(s))
      return `${where} contains a lone UTF-16 surrogate, which is not valid Unicode text`;
    return null;
  };
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = text(value, path);
      if (problem) return problem;
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_NOTIFICATION_DEPTH)
        return `the body is nested deeper than ${MAX_NOTIFICATION_DEPTH} levels (at ${path.slice(0, 60)}...)`;
      if (Array.isArray(value)) {
        value.forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]`, depth: depth + 1 }));
      } else {
        for (const [k, v] of Object.entries(value)) {
          const problem = text(k, `a key of ${path}`);
          if (problem) return problem;
          stack.push({ value: v, path: `${path}.${k}`, depth: depth + 1 });
        }
      }
    }
  }
  return null;
}

/** Validates and normalises one body posted to the transaction or return endpoint. Never throws. */
export function normaliseNotification(kind: NotificationKind, body: unknown): NormaliseResult {
  try {
    if (!isObject(body)) throw new Invalid('the body must be a JSON object');
    const unstorable = unstorableContent(body);
    if (unstorable) throw new Invalid(unstorable);
    const merchant = body.merchant ?? {};
    const account = body.accountInfo ?? {};
    const txn = body.transaction;
    if (!isObject(merchant)) throw new Invalid('merchant must be an object');
    if (!isObject(account)) throw new Invalid('accountInfo must be an object');
    if (!isObject(txn))
      throw new Invalid('transaction must be an object: a notification without it cannot be matched');
    const transactionId = str(txn, 'transaction', 'transactionId', 1);
    if (transactionId === null)
      throw new Invalid('transaction.transactionId is missing: the notification cannot be matched');

    const merchantId = str(merchant, 'merchant', 'merchantId', 1, 16);
    const subId = int(merchant, 'merchant', 'merchantSubId');
    if (subId && (subId.value < 0 || subId.value > 1_000_000))
      throw new Invalid('merchant.merchantSubId must be 0-1000000');
    const mtid = str(merchant, 'merchant', 'merchantTransactionId', 1, 30);
    const muid = str(merchant, 'merchant', 'merchantUserId', 3, 64);

    const token = str(account, 'accountInfo', 'accountToken');
    const label = str(account, 'accountInfo', 'accountLabel', 8, 8);
    const accountType = str(account, 'accountInfo', 'accountType');
    if (accountType !== null && accountType !== 'PC' && accountType !== 'PS') {
      throw new Invalid(
        `accountInfo.accountType must be PC or PS, got ${JSON.stringify(accountType.slice(0, 10))}`,
      );
    }
    str(account, 'accountInfo', 'fiName');

    const rawType = str(txn, 'transaction', 'transactionType');
    const rawStatus = str(txn, 'transaction', 'transactionStatus');
    const amount = int(txn, 'transaction', 'transactionAmount');
    const fee = int(txn, 'transaction', 'transactionFee');
    const status = canonicalProviderStatus(rawStatus);
    // Section 8: outside 100..100000000 the transaction is rejected, so only a non-successful
    // notification may carry such an amount.
    if (amount && (amount.value < 100 || amount.value > 100_000_000) && status === 'SUCCESSFUL') {
      throw new Invalid(
        `transaction.transactionAmount ${amount.raw} is outside 100-100000000 for a successful transaction`,
      );
    }
    if (amount && amount.value < 0) throw new Invalid('transaction.transactionAmount must not be negative');
    if (fee && fee.value < 0) throw new Invalid('transaction.transactionFee must not be negative');
    const currency = str(txn, 'transaction', 'currencyCode');
    if (currency !== null && !/^[A-Z]{3}$/.test(currency)) {
      throw new Invalid(
        `transaction.currencyCode must be 3 uppercase letters (ISO 4217), got ${JSON.stringify(currency.slice(0, 10))}`,
      );
    }
    str(txn, 'transaction', 'dataPassThrough', 0, 128);
    const errorCode = str(txn, 'transaction', 'errorCode');
    const returnCode = str(txn, 'transaction', 'returnCode');
    const nextAction = str(txn, 'transaction', 'nextActionDate');

    return {
      ok: true,
      value: {
        kind,
        delivery_key: deliveryKey(kind, body),
        transaction_id: transactionId,
        merchant_transaction_id: mtid,
        merchant_id: merchantId,
        merchant_user_id: muid,
        transaction_type: rawType === 'DEBIT' || rawType === 'CREDIT' ? rawType : null,
        raw_transaction_type: rawType,
        status,
        raw_status: rawStatus,
        amount_cents: amount?.value ?? null,
        raw_amount: amount?.raw ?? null,
        fee_cents: fee?.value ?? null,
        currency,
        error_code: errorCode,
        return_code: returnCode,
        raw_next_action_date: nextAction,
        account_token: token,
        account_label: label,
        payload: body,
      },
    };
  } catch (error) {
    if (error instanceof Invalid) return { ok: false, reason: error.message };
    // Never throws: whatever else goes wrong on a body is the body's problem, kept in the quarantine.
    return {
      ok: false,
      reason: `the body could not be read: ${(error as Error).name}: ${(error as Error).message}`,
    };
  }
}
