import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';

// docs/operations.md ("A run looks only at what changed"): when most of a range changed (more than
// 10,000 keys, and a quarter of its provider rows or more), a run over the changed keys would cost
// more than a full one, so the run is full; a few changes later, it looks at the keys again.

const h = useTestDatabase();
const RANGE = { from: '2026-03-02', to: '2026-03-06', now: '2026-03-20T12:00:00Z' };
const ROWS = 12_000;

describe('a run after a change to most of its range', () => {
  it('matches in full, and a run after a few changes over the changed keys', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    for (let start = 0; start < ROWS; start += 2_000) {
      await insertTransactions(
        h.db,
        load,
        Array.from({ length: 2_000 }, (_, k) => {
          const i = start + k;
          const day = `2026-03-0${2 + (i % 5)}`;
          return { transaction_id: `T${i}`, transaction_on: day, transaction_at: `${day}T15:00:00Z` };
        }),
      );
    }
    expect((await reconcileRange(h.db, RANGE)).scope).toBe('full');

    await sql`update provider_transactions set raw_status = raw_status where transaction_id like 'T%'`.execute(
      h.db,
    );
    const most = await reconcileRange(h.db, RANGE);
    expect([most.scope, most.fullBecause]).toEqual(['full', 'most of the range changed']);

    await sql`update provider_transactions set raw_status = raw_status where transaction_id in ('T1', 'T2')`.execute(
      h.db,
    );
    expect((await reconcileRange(h.db, RANGE)).scope).toBe('incremental');
  }, 120_000);
});
