import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// A payin booked late under a mistyped id (issue 29, section 1): the ledger entry is still inside its
// grace period, so it is no missing_at_provider discrepancy yet, but it is the payin's candidate today.

let h: DatabaseHandle;
const RANGE = { from: '2026-03-16', to: '2026-03-19' };

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    {
      transaction_id: 'T-1',
      merchant_user_id: 'u1',
      transaction_at: '2026-03-16T15:00:00.000000Z',
      transaction_on: '2026-03-16',
    },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-l', merchant_user_id: 'u1', booked_at: '2026-03-18T15:00:00Z' },
    // Claimed by no provider row either, but rejected: never a candidate.
    {
      merchant_transaction_id: 'M-T-I',
      merchant_user_id: 'u1',
      booked_at: '2026-03-18T15:00:00Z',
      status: 'REJECTED',
    },
  ]);
});
afterAll(async () => h?.close());

async function candidatesOfT1() {
  const r = await sql<{
    candidate_id: string;
    candidate_discrepancy_id: string | null;
    checks: { check: string; passed: boolean }[];
  }>`
    select c.candidate_id, c.candidate_discrepancy_id::text as candidate_discrepancy_id, c.checks
    from match_candidates c join discrepancies d using (discrepancy_id)
    where d.discrepancy_key = 'missing_in_ledger:T-1' and d.resolved_at is null order by c.rank`.execute(
    h.db,
  );
  return r.rows;
}

const openKeys = async () =>
  (
    await sql<{ k: string }>`select discrepancy_key as k from discrepancies
      where resolved_at is null and kind like 'missing%' order by 1`.execute(h.db)
  ).rows.map((r) => r.k);

describe('a ledger entry inside its grace period', () => {
  it('is the candidate of a missing_in_ledger item before it is a discrepancy itself', async () => {
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-19T16:00:00Z' });
    expect(await openKeys()).toEqual(['missing_in_ledger:T-1']);
    const c = await candidatesOfT1();
    expect(c.map((x) => [x.candidate_id, x.candidate_discrepancy_id])).toEqual([['M-T-l', null]]);
    expect(Object.fromEntries(c[0]!.checks.map((k) => [k.check, k.passed]))).toEqual({
      amount: true,
      business_date: false,
      merchant_user: true,
      id: true,
    });
  });

  it('stays the candidate, with its own discrepancy, once the grace period has run out', async () => {
    await reconcileRange(h.db, { ...RANGE, now: '2026-04-01T16:00:00Z' });
    expect(await openKeys()).toEqual(['missing_at_provider:M-T-l', 'missing_in_ledger:T-1']);
    const c = await candidatesOfT1();
    expect(c.map((x) => [x.candidate_id, x.candidate_discrepancy_id !== null])).toEqual([['M-T-l', true]]);
  });
});
