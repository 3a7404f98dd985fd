import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { RULES } from '../../reconcile/rules/run-rules.ts';
import { createTestDatabase } from '../support/database.ts';
import { probeRule } from '../support/probe-rule.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

/**
 * The settlement roll-forward reads the claims through settlement_items: in a first run it analyzes
 * the claims the run has just written, when their statistics count fewer rows than the run's facts,
 * so that the view is planned for their real size (reconcile/rules/settlement.ts;
 * docs/benchmark-record.md §2); a run of a few days of a larger history leaves them as they are.
 */

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

/**
 * A rule run after the roll-forward (RULES end with it) that reports, as a finding, how many rows
 * the planner's statistics count in the claims table at that moment, in the run's transaction.
 */
const statisticsProbe = probeRule(
  'test_claim_statistics_probe',
  (ctx) => `(select '${ctx.from}' as day, reltuples::bigint as n from pg_class
    where oid = 'public.transaction_matches'::regclass) x`,
  ['day', 'n'],
);

async function probed(): Promise<string[]> {
  const r = await sql<{ discrepancy_key: string }>`select discrepancy_key from discrepancies
    where rule = 'test_claim_statistics_probe' and resolved_at is null`.execute(h.db);
  return r.rows.map((x) => x.discrepancy_key);
}

async function insertPairs(day: string, from: number, count: number): Promise<void> {
  const load = await insertLoad(h.db, 'report-transactions');
  const ids = Array.from({ length: count }, (_, i) => `T-${day}-${from + i}`);
  await insertTransactions(
    h.db,
    load,
    ids.map((transaction_id) => ({
      transaction_id,
      transaction_on: day,
      transaction_at: `${day}T15:00:00.000000Z`,
      notify_status: null,
    })),
  );
  await insertLedger(
    h.db,
    ids.map((id) => ({ merchant_transaction_id: `M-${id}`, booked_at: `${day}T15:00:01Z` })),
  );
}

describe("the roll-forward and the claims' statistics", () => {
  it("analyzes the claims a first run wrote before it reads them, and leaves a larger history's alone", async () => {
    await insertPairs('2026-03-02', 0, 40);
    await sql`analyze`.execute(h.db);
    const now = '2026-03-19T12:00:00Z';
    await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now, full: true }, [
      ...RULES,
      statisticsProbe,
    ]);
    // 40 claims written in the run: counted while the run still reads them (0 before the analysis).
    expect(await probed()).toEqual(['test_claim_statistics_probe:2026-03-02:40']);

    await insertPairs('2026-03-03', 0, 5);
    await sql`analyze public.transaction_matches`.execute(h.db);
    await reconcileRange(h.db, { from: '2026-03-03', to: '2026-03-03', now, full: true }, [
      ...RULES,
      statisticsProbe,
    ]);
    // A day of 5 rows among 40 claims: the statistics (40) already count more than its facts.
    const r = await sql<{ n: string }>`select count(*)::text as n from transaction_matches`.execute(h.db);
    expect(r.rows[0]!.n).toBe('45');
    expect(await probed()).toContain('test_claim_statistics_probe:2026-03-03:40');
  });
});
