import { request } from 'undici';
import type { HistoryTransaction } from './history.ts';

/**
 * Notification bodies (docs/provider-interface.md 6) the sandbox sends, and the provider-like delivery: POST with JSON,
 * retried with exponential back-off until the merchant answers 2xx or the attempts run out.
 *
 * Sandbox choices where the spec says "not shown": transactionAmount and transactionFee are cents
 * (as in reports); a return notification's transaction carries the return transaction id, the status
 * RETURNED (RETURNED_WITH_REPRESENTMENT when a re-debit is announced), and adds originalTransactionId, returnCode and nextActionDate (the ConfirmTransaction
 * fields); the receiver is authenticated with the shared notification secret as a bearer token.
 */

/** transactionStatus of notifications (docs/provider-interface.md 6): SUCCESS, REJECTED or FAILED. */
export function notificationStatus(f: HistoryTransaction): 'SUCCESS' | 'REJECTED' | 'FAILED' {
  return f.outcome === 'SUCCESSFUL' ? 'SUCCESS' : f.outcome;
}

/** The merchant block of every notification body (docs/provider-interface.md 6). */
function merchantOf(f: HistoryTransaction, merchantId: string) {
  return {
    merchantId,
    merchantSubId: 0,
    merchantTransactionId: f.merchantTransactionId,
    merchantUserId: f.merchantUserId,
  };
}

export function transactionNotificationBody(f: HistoryTransaction, merchantId: string) {
  return {
    merchant: merchantOf(f, merchantId),
    accountInfo: {
      accountToken: f.accountToken,
      accountLabel: f.accountLabel,
      accountType: f.accountType,
      fiName: f.bankName,
    },
    transaction: {
      transactionType: f.type,
      transactionFee: f.feeCents,
      transactionStatus: notificationStatus(f),
      dataPassThrough: f.externalReference,
      transactionAmount: f.amountCents,
      errorCode: f.errorCode,
      currencyCode: f.currency,
      transactionId: f.transactionId,
    },
  };
}

export function returnNotificationBody(f: HistoryTransaction, merchantId: string) {
  const ret = f.return;
  if (!ret) throw new RangeError(`transaction ${f.transactionId} has no return`);
  return {
    merchant: merchantOf(f, merchantId),
    transaction: {
      transactionType: f.type,
      transactionFee: 0,
      transactionStatus: ret.representment ? 'RETURNED_WITH_REPRESENTMENT' : 'RETURNED',
      dataPassThrough: f.externalReference,
      transactionAmount: ret.amountCents,
      errorCode: null,
      currencyCode: f.currency,
      transactionId: ret.returnTransactionId,
      originalTransactionId: f.transactionId,
      returnCode: ret.returnCode,
      nextActionDate: ret.nextActionDate,
    },
  };
}

export interface DeliveryOptions {
  /** Attempts before giving up (default 5). */
  readonly attempts?: number;
  /** First back-off; doubled each attempt, with up to 50% jitter (default 200 ms). */
  readonly backoffMs?: number;
  /** Sent as `Authorization: Bearer <secret>` when set. */
  readonly secret?: string;
  readonly timeoutMs?: number;
}

export interface Delivery {
  readonly kind: 'transaction' | 'return';
  readonly transactionId: string;
  readonly attempts: number;
  readonly delivered: boolean;
  /** Last HTTP status, or null when the last attempt did not get an answer. */
  readonly lastStatus: number | null;
}

/** Posts one notification until a 2xx answer or `attempts` tries. Never throws. */
export async function deliverNotification(
  url: string,
  kind: 'transaction' | 'return',
  body: { transaction: { transactionId: string } },
  options: DeliveryOptions = {},
): Promise<Delivery> {
  const attempts = options.attempts ?? 5;
  const backoff = options.backoffMs ?? 200;
  const payload = JSON.stringify(body);
  let lastStatus: number | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const res = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.secret ? { authorization: `Bearer ${options.secret}` } : {}),
        },
        body: payload,
        headersTimeout: options.timeoutMs ?? 10_000,
        bodyTimeout: options.timeoutMs ?? 10_000,
      });
      lastStatus = res.statusCode;
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return {
          kind,
          transactionId: body.transaction.transactionId,
          attempts: attempt,
          delivered: true,
          lastStatus,
        };
      }
    } catch {
      lastStatus = null;
    }
    if (attempt < attempts) {
      const delay = backoff * 2 ** (attempt - 1);
      await new Promise((r) => setTimeout(r, delay + Math.floor(Math.random() * (delay / 2))));
    }
  }
  return { kind, transactionId: body.transaction.transactionId, attempts, delivered: false, lastStatus };
}
