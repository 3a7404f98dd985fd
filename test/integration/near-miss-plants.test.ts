import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { discrepancyCandidates } from '../../reconcile/candidates/read-candidates.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { deriveMerchantView, type MerchantView } from '../../sandbox/merchant-view.ts';
import { mistypings } from '../../sandbox/merchant-view/near-misses.ts';
import { scoreGroundTruth } from '../../sandbox/score-ground-truth.ts';
import { createTestDatabase } from '../support/database.ts';
import { loadMerchantView } from '../support/load-merchant-view.ts';

/**
 * The sandbox's near misses (sandbox/merchant-view/near-misses.ts): mistyped ids, split and combined
 * bookings, and fees one cent off the contract are each an expected discrepancy of the right kind
 * (100% precision and recall), and the mistyped or split entries are the provider transaction's
 * candidates with the id check passed.
 */

let h: DatabaseHandle;
beforeEach(async () => {
  h = await createTestDatabase();
});
afterEach(async () => h.close());

async function candidatesOf(view: MerchantView, transactionId: string) {
  const d = await h.db
    .selectFrom('discrepancies')
    .select('discrepancy_id')
    .where('discrepancy_key', '=', `missing_in_ledger:${transactionId}`)
    .where('resolved_at', 'is', null)
    .executeTakeFirstOrThrow();
  return (await discrepancyCandidates(h.db, Number(d.discrepancy_id), 'all')).candidates;
}

describe('near misses in the sandbox', () => {
  it('mistypes a digit of the number only, by a swap or a drop', () => {
    expect(mistypings('MT-2K9-0000000129', 0.1, 0)).toEqual([
      'MT-2K9-0000001029',
      'MT-2K9-0000000219',
      'MT-2K9-0000000192',
      'MT-2K9-000000129',
      'MT-2K9-000000029',
      'MT-2K9-000000019',
      'MT-2K9-000000012',
    ]);
    expect(mistypings('MT-2K9-0000000129', 0.9, 0)[0]).toBe('MT-2K9-000000129');
  });

  it('plants each kind, finds exactly them, and shows the right entry as the candidate', async () => {
    const view = deriveMerchantView({
      seed: 'pipeline',
      transactions: 2000,
      from: '2026-03-01',
      to: '2026-11-08',
    });
    const kinds = new Set(view.nearMisses.map((n) => n.kind));
    expect([...kinds].sort()).toEqual(['combined_booking', 'mistyped_id', 'split_booking']);
    const oneCent = view.expected.filter(
      (e) => e.kind === 'fee_mismatch' && e.actualAmountCents! - e.expectedAmountCents! === 1,
    );
    expect(oneCent.length).toBeGreaterThan(5);

    await loadMerchantView(h.db, view);
    await reconcileRange(h.db, { ...view.range, now: view.asOf });
    const score = await scoreGroundTruth(h.db, view.expected);
    expect({ surplus: score.surplus, missed: score.missed }).toEqual({ surplus: [], missed: [] });

    for (const n of view.nearMisses) {
      const [p0, p1] = n.providerTransactionIds;
      if (n.kind === 'combined_booking') {
        // The first payin claims the entry (its amount is both), the second has none.
        expect(view.expected.map((e) => e.key)).toEqual(
          expect.arrayContaining([`amount_mismatch:${p0}`, `missing_in_ledger:${p1}`]),
        );
        continue;
      }
      const candidates = await candidatesOf(view, p0!);
      for (const id of n.ledgerMerchantTransactionIds) {
        const c = candidates.find((x) => x.side === 'ledger' && x.id === id);
        expect(c, `${n.kind} ${p0} -> ${id}`).toBeDefined();
        expect(c!.checks.find((k) => k.check === 'id')).toMatchObject({ passed: true });
        expect(c!.checks.find((k) => k.check === 'merchant_user')).toMatchObject({ passed: true });
        if (n.kind === 'mistyped_id') {
          expect(c!.rank).toBe(1);
          expect(c!.checks.find((k) => k.check === 'amount')).toMatchObject({ passed: true });
        }
      }
    }
  }, 120_000);
});
