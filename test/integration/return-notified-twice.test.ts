import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { storeTestNotification } from '../support/recon-rows.ts';

// A return announced twice, on two days that two ranges hold apart, is one return_not_reported
// discrepancy, dated on its first announcement whichever range is run (reconcile/rules/
// return-notifications.ts, RECEIVED_RETURNS). Found by the property test of reconcile-incremental,
// seed 3010: full runs of two overlapping ranges moved the discrepancy between the two days at every
// run ('changed' events), where runs over changed keys, with nothing changed, did not. And a run
// over changed keys that looks at the return only because the day of its second announcement became
// due takes its first announcement too (reconcile/rules/returns-scope.ts, scope_n): found by the
// accounts property test, seed 4009, where such a run resolved the discrepancy a full run keeps open.

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const NOW = '2026-04-20T12:00:00Z';
const FIRST = { from: '2026-03-01', to: '2026-03-05' };
const SECOND = { from: '2026-03-06', to: '2026-03-10' };

async function discrepancy() {
  const r = await sql<{ business_date: string; status: string; events: string[] }>`
    select d.business_date::text, d.status, array_agg(e.event order by e.event_id) as events
    from discrepancies d join discrepancy_events e using (discrepancy_id)
    where d.discrepancy_key = 'return_not_reported:R-9' group by d.discrepancy_id`.execute(h.db);
  return r.rows;
}

async function clean() {
  await sql`truncate notifications, notification_matches, discrepancies, discrepancy_events,
    discrepancy_totals, reconcile_runs cascade`.execute(h.db);
  await sql`truncate recon_work.matched_days, recon_work.changed_keys, recon_work.matched_ranges`.execute(
    h.db,
  );
}

const OVER = { transactionStatus: 'RETURNED', returnCode: '901', nextActionDate: '2026-03-12' };

async function announceTwice(second: string) {
  await storeTestNotification(h.db, 'R-9', 'M-9', OVER, '2026-03-03T17:00:00Z', 'return');
  await storeTestNotification(h.db, 'R-9', 'M-9', { ...OVER, transactionAmount: 1001 }, second, 'return');
}

describe('a return announced on two days', () => {
  for (const full of [true, false])
    it(`is dated on its first announcement by the runs of either range (${full ? 'in full' : 'over changed keys'})`, async () => {
      await clean();
      await announceTwice('2026-03-07T17:00:00Z');
      for (const range of [FIRST, SECOND, FIRST, SECOND])
        await reconcileRange(h.db, { ...range, now: NOW, full });
      expect(await discrepancy()).toEqual([
        { business_date: '2026-03-03', status: 'open', events: ['opened'] },
      ]);
    });

  // One range holds both announcements (Tuesday 03-03, Monday 03-09). On 03-10 only the first is due
  // (two business days of grace); on 03-13 the second's day is due too, and a run over changed keys,
  // with nothing written since, looks at that day whole (flagged_days) and at nothing else.
  for (const full of [true, false])
    it(`stays open once its second announcement is due (${full ? 'in full' : 'over changed keys'})`, async () => {
      await clean();
      await announceTwice('2026-03-09T17:00:00Z');
      const range = { from: '2026-03-01', to: '2026-03-10' };
      await reconcileRange(h.db, { ...range, now: '2026-03-10T17:00:00Z', full: true });
      expect(await discrepancy()).toEqual([
        { business_date: '2026-03-03', status: 'open', events: ['opened'] },
      ]);
      const run = await reconcileRange(h.db, { ...range, now: '2026-03-13T17:00:00Z', full });
      expect(run.scope).toBe(full ? 'full' : 'incremental');
      expect(await discrepancy()).toEqual([
        { business_date: '2026-03-03', status: 'open', events: ['opened'] },
      ]);
    });
});
