import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { deriveMerchantView } from '../../sandbox/merchant-view.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { DISCREPANCY_KINDS } from '../../reconcile/settings.ts';
import { createTestDatabase } from '../support/database.ts';
import { loadMerchantView } from '../support/load-merchant-view.ts';

let h: DatabaseHandle;
beforeEach(async () => {
  h = await createTestDatabase();
});
afterEach(async () => h.close());

const cases = [
  { seed: 1, transactions: 3000, from: '2026-03-01', to: '2026-03-12' }, // spring-forward day inside
  { seed: 'autumn', transactions: 1500, from: '2026-10-28', to: '2026-11-04' }, // fall-back day inside
  { seed: 977, transactions: 400, from: '2026-12-20', to: '2027-01-03' }, // holidays, small
];

describe('reconciliation against the sandbox ground truth', () => {
  for (const c of cases) {
    it(`finds exactly the injected discrepancies: seed ${c.seed}, ${c.transactions} transactions`, async () => {
      const view = deriveMerchantView(c);
      await loadMerchantView(h.db, view);
      const summary = await reconcileRange(h.db, { ...view.range, now: view.asOf });
      const rows = await h.db
        .selectFrom('discrepancies')
        .select(['discrepancy_key', 'kind', 'expected_amount_cents', 'actual_amount_cents'])
        .where('resolved_at', 'is', null)
        .orderBy('discrepancy_key')
        .execute();
      const actual = rows.map(
        (r) => `${r.discrepancy_key} ${r.kind} ${r.expected_amount_cents} ${r.actual_amount_cents}`,
      );
      const expected = view.expected.map(
        (e) => `${e.key} ${e.kind} ${e.expectedAmountCents} ${e.actualAmountCents}`,
      );
      const hits = actual.filter((a) => expected.includes(a)).length;
      const precision = hits / actual.length;
      const recall = hits / expected.length;
      expect({ precision, recall }).toEqual({ precision: 1, recall: 1 });
      expect(actual).toEqual(expected);
      expect(summary.totalDiscrepancies).toBe(expected.length);
      if (c.transactions >= 3000) {
        // The large case injects every kind at least once.
        expect([...new Set(view.expected.map((e) => e.kind))].sort()).toEqual([...DISCREPANCY_KINDS].sort());
      }
    });
  }
});
