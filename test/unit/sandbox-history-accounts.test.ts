import { describe, expect, it } from 'vitest';
import { createHistory } from '../../sandbox/history.ts';

describe('sandbox history of one provider account', () => {
  const base = { transactions: 400, from: '2026-03-01', to: '2026-03-20' };

  it('settles every transaction in the currency of the account when given one', () => {
    const usd = createHistory({ ...base, seed: 'acct-us', currency: 'USD' });
    const currencies = new Set([...usd.facts({})].map((f) => f.currency));
    expect(currencies).toEqual(new Set(['USD']));
    const mixed = new Set([...createHistory({ ...base, seed: 'acct-us' }).facts({})].map((f) => f.currency));
    expect(mixed).toEqual(new Set(['CAD', 'USD']));
  });

  it('repeats merchant transaction ids across accounts that share a tag, never provider ids', () => {
    const a = createHistory({ ...base, seed: 'acct-a', merchantTransactionTag: 'SHR' });
    const b = createHistory({ ...base, seed: 'acct-b', merchantTransactionTag: 'SHR', transactions: 200 });
    const aFacts = [...a.facts({})];
    const bFacts = [...b.facts({})];
    const aMt = new Set(aFacts.map((f) => f.merchantTransactionId));
    const shared = bFacts.filter((f) => aMt.has(f.merchantTransactionId));
    expect(shared.length).toBeGreaterThan(100);
    const aIds = new Set(aFacts.map((f) => f.transactionId));
    expect(bFacts.filter((f) => aIds.has(f.transactionId))).toEqual([]);
    expect(a.options.merchantTransactionTag).toBe('SHR');
    expect(createHistory({ ...base, seed: 'acct-a' }).options.merchantTransactionTag).not.toBe('SHR');
  });
});
