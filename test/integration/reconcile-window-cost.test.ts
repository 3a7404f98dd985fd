import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateRows } from '../../bench/generate-rows.ts';
import {
  HISTORY_SECONDS,
  HISTORY_START,
  WINDOW,
  WINDOW_SECONDS,
  WINDOW_START,
} from '../../bench/window-cost.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertReturns } from '../support/recon-rows.ts';

// One connection: the run and the statistics read below share a backend, whose counters are
// flushed on demand (pg_stat_force_next_flush).
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(1);
  await sql`insert into loads (source, environment, origin, format, status) values ('report-transactions','staging','direct','report-json','committed')`.execute(
    h.db,
  );
  await generateRows(h.db, 1001, 60_000, HISTORY_START, HISTORY_SECONDS, { duplicates: true });
  await generateRows(h.db, 1, 1000, WINDOW_START, WINDOW_SECONDS, { duplicates: true });
  // A RETURN booked in the window whose provider return is known only through its original.
  // (returned later, so that no run has claimed the entry for it yet).
  await insertReturns(h.db, 1, [
    {
      return_transaction_id: 'R-1',
      original_transaction_id: 'T0000000010',
      amount_cents: 100,
      returned_on: '2026-04-01',
    },
  ]);
  await sql`insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency, status,
      booked_at, original_merchant_transaction_id)
    values ('LR-1', 'RETURN', 100, 'CAD', 'SUCCESSFUL', '2026-03-11T15:00:00Z', 'M0000000010'),
      ('LR-2', 'RETURN', 100, 'CAD', 'SUCCESSFUL', '2026-03-11T15:00:00Z', 'M-NOT-RETURNED')`.execute(h.db);
  await reconcileRange(h.db, { from: '2024-03-01', to: '2026-03-09', now: '2026-03-09T12:00:00Z' });
  await sql`vacuum analyze`.execute(h.db);
}, 120_000);
afterAll(async () => h?.close());

const LARGE = [
  'provider_transactions',
  'merchant_ledger',
  'notifications',
  'transaction_matches',
  'notification_matches',
  'discrepancies',
  'discrepancy_events',
];

async function seqScans(): Promise<Record<string, number>> {
  await sql`select pg_stat_force_next_flush()`.execute(h.db);
  const r = await sql<{ relname: string; seq_scan: string }>`
    select relname, seq_scan from pg_stat_user_tables where relname = any(${LARGE}::text[])`.execute(h.db);
  return Object.fromEntries(r.rows.map((x) => [x.relname, Number(x.seq_scan)]));
}

it('reconciles a 3-day window without reading the history: no scan of a large table, first run or re-run', async () => {
  for (const now of [WINDOW.now, '2026-03-21T12:00:00Z']) {
    const before = await seqScans();
    const summary = await reconcileRange(h.db, { from: WINDOW.from, to: WINDOW.to, now });
    const after = await seqScans();
    const scanned = LARGE.filter((t) => after[t]! > before[t]!);
    expect(scanned).toEqual([]);
    // The window's own findings, and the RETURN known only through its original is not missing.
    const kinds = Object.fromEntries(summary.discrepancies.map((d) => [`${d.kind}/${d.currency}`, d.count]));
    expect(kinds['missing_in_ledger/CAD']).toBeGreaterThan(0);
    const returns = await sql<{
      merchant_transaction_id: string;
    }>`select merchant_transaction_id from discrepancies
      where kind = 'missing_at_provider' and rule = 'ledger_return_vs_provider' and resolved_at is null`.execute(
      h.db,
    );
    expect(returns.rows.map((x) => x.merchant_transaction_id)).toEqual(['LR-2']);
  }
});

it('folds the totals of the run’s dates only, and the totals still add up to the discrepancies', async () => {
  const outside = await sql<{ n: number }>`select count(*)::int as n from discrepancy_totals
    where business_date not between ${WINDOW.from}::date and ${WINDOW.to}::date`.execute(h.db);
  // An old discrepancy acknowledged in the workbench appends deltas outside the window: kept as they are.
  await sql`update discrepancies set status = 'acknowledged'
    where discrepancy_id = (select min(discrepancy_id) from discrepancies where business_date < '2026-03-01')`.execute(
    h.db,
  );
  await reconcileRange(h.db, { from: WINDOW.from, to: WINDOW.to, now: '2026-03-22T12:00:00Z' });
  const after = await sql<{ n: number }>`select count(*)::int as n from discrepancy_totals
    where business_date not between ${WINDOW.from}::date and ${WINDOW.to}::date`.execute(h.db);
  expect(after.rows[0]!.n).toBe(outside.rows[0]!.n + 2);
  const inWindow = await sql<{ n: number; keys: number }>`select count(*)::int as n,
      count(distinct (business_date, kind, currency, status))::int as keys from discrepancy_totals
    where business_date between ${WINDOW.from}::date and ${WINDOW.to}::date`.execute(h.db);
  expect(inWindow.rows[0]!.n).toBe(inWindow.rows[0]!.keys);
  const mismatch = await sql<{ n: number }>`select count(*)::int as n from (
      select coalesce(business_date, 'infinity') as d, kind, coalesce(currency, '') as c, status, count(*) as count
      from discrepancies group by 1, 2, 3, 4) x
    full join (select business_date as d, kind, currency as c, status, sum(count) as count from discrepancy_totals
      group by 1, 2, 3, 4 having sum(count) <> 0) t using (d, kind, c, status)
    where x.count is distinct from t.count`.execute(h.db);
  expect(mismatch.rows[0]!.n).toBe(0);
});
