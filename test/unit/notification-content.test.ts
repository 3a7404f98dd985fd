import { describe, expect, it } from 'vitest';
import {
  MAX_NOTIFICATION_DEPTH,
  normaliseNotification,
  unstorableContent,
} from '../../ingest/notifications/normalise-notification.ts';

const body = (txn: Record<string, unknown> = {}, merchant: Record<string, unknown> = {}) => ({
  merchant: { merchantId: 'M1', merchantSubId: 0, ...merchant },
  transaction: { transactionId: 'T-1', transactionStatus: 'SUCCESS', transactionAmount: 2015, ...txn },
});

describe('what PostgreSQL could not store faithfully is refused, wherever it is', () => {
  it('finds NUL and lone surrogates in values and keys, at any position', () => {
    expect(unstorableContent({ a: ['ok', { b: 'x\u0000' }] })).toMatch(/^\$\.a\[1\]\.b contains a NUL/);
    expect(unstorableContent({ a: '\ud800' })).toMatch(/lone UTF-16 surrogate/);
    expect(unstorableContent({ a: 'x\udc00' })).toMatch(/lone UTF-16 surrogate/);
    expect(unstorableContent({ ['k\ud83d']: 1 })).toMatch(/^a key of \$ contains a lone/);
    // A proper pair (an emoji) is text.
    expect(unstorableContent({ a: '\ud83d\ude00', b: 'é' })).toBeNull();
  });

  it('refuses nesting beyond the limit without recursing (5,000 and 100,000 deep)', () => {
    for (const depth of [5000, 100_000]) {
      const deep = JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;
      expect(unstorableContent({ x: deep })).toMatch(`nested deeper than ${MAX_NOTIFICATION_DEPTH} levels`);
    }
    let ok: unknown = [];
    for (let i = 0; i < MAX_NOTIFICATION_DEPTH - 1; i++) ok = [ok];
    expect(unstorableContent(ok)).toBeNull();
  });
});

describe('integer fields are JSON integers', () => {
  it('refuses digits sent as a string for the amount, the fee and the sub id', () => {
    for (const [txn, merchant, field] of [
      [{ transactionAmount: '2015' }, {}, 'transaction.transactionAmount'],
      [{ transactionFee: '30' }, {}, 'transaction.transactionFee'],
      [{}, { merchantSubId: '0' }, 'merchant.merchantSubId'],
    ] as const) {
      const result = normaliseNotification('transaction', body(txn, merchant));
      expect(result).toEqual({
        ok: false,
        reason: expect.stringContaining(`${field} must be a JSON integer`),
      });
    }
    expect(normaliseNotification('transaction', body()).ok).toBe(true);
  });

  it('never throws: a NUL anywhere is a reason, not an exception', () => {
    const result = normaliseNotification('transaction', body({}, { merchantTransactionId: 'M-\u0000' }));
    expect(result).toEqual({
      ok: false,
      reason: expect.stringContaining('merchantTransactionId contains a NUL'),
    });
  });
});
