import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { readsSuspects, type Rule } from '../../reconcile/rules/rule.ts';
import { RULES } from '../../reconcile/rules/run-rules.ts';
import { DISCREPANCY_KINDS } from '../../reconcile/settings.ts';
import { explainKind, explainRule } from '../../reconcile/rules/rules-in-words.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

/** A rule no production code knows of: it flags provider rows of exactly 42.42. */
const oddAmount: Rule = {
  name: 'test_odd_amount',
  rule: 'test_odd_amount',
  kinds: ['amount_mismatch'],
  reads: { suspects: true },
  when: () => 'f.amount_cents = 4242',
  select: () => ({
    discrepancy_key: `'test_odd_amount:' || f.transaction_id`,
    transaction_id: 'f.transaction_id',
    business_date: 'f.transaction_on',
    currency: 'f.currency',
    expected_amount_cents: 'f.amount_cents',
  }),
};

async function findingsOf(rule: string): Promise<string[]> {
  const rows = await h.db
    .selectFrom('discrepancies')
    .select('transaction_id')
    .where('rule', '=', rule)
    .where('resolved_at', 'is', null)
    .orderBy('transaction_id')
    .execute();
  return rows.map((r) => String(r.transaction_id));
}

describe('matching rules registry', () => {
  it('reaches a rule registered without touching the suspects filter, on a row no other rule suspects', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    // Both rows agree with the ledger and carry no notification status: no built-in rule that reads
    // the suspects has anything to say about them.
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-PLAIN', notify_status: null },
      { transaction_id: 'T-ODD', notify_status: null, amount_cents: 4242 },
    ]);
    await insertLedger(h.db, [
      { merchant_transaction_id: 'M-T-PLAIN' },
      { merchant_transaction_id: 'M-T-ODD', amount_cents: 4242 },
    ]);
    const range = { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' };

    await reconcileRange(h.db, range);
    const suspected = await h.db
      .selectFrom('discrepancies')
      .select(['transaction_id', 'rule'])
      .where(
        'rule',
        'in',
        RULES.filter(readsSuspects).map((r) => r.rule),
      )
      .execute();
    expect(suspected).toEqual([]);

    await reconcileRange(h.db, { ...range, now: '2026-03-21T12:00:00Z' }, [...RULES, oddAmount]);
    expect(await findingsOf('test_odd_amount')).toEqual(['T-ODD']);

    // Without the rule the finding is resolved again: the run's findings are the rules' only.
    await reconcileRange(h.db, { ...range, now: '2026-03-22T12:00:00Z' });
    expect(await findingsOf('test_odd_amount')).toEqual([]);
  });

  it('refuses two rules with one name', async () => {
    const range = { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' };
    await expect(
      reconcileRange(h.db, range, [...RULES, { ...oddAmount, name: RULES[0]!.name }]),
    ).rejects.toThrow(/two matching rules are named/);
  });

  it('explains every rule and kind in words (workbench/rules-in-words.ts)', () => {
    for (const rule of RULES) {
      expect(explainRule(rule.kinds[0]!, rule.rule).compares, rule.name).not.toBe(`Rule ${rule.rule}.`);
      for (const kind of rule.kinds) {
        expect(DISCREPANCY_KINDS).toContain(kind);
        expect(explainKind(kind).todo, kind).not.toBe('Investigate the evidence.');
      }
    }
    // Every kind of the product is found by some rule.
    expect(new Set(RULES.flatMap((r) => r.kinds))).toEqual(new Set(DISCREPANCY_KINDS));
  });
});
