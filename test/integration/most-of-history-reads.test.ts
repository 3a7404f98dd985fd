import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { RULES } from '../../reconcile/rules/run-rules.ts';
import { createTestDatabase } from '../support/database.ts';
import { probeRule } from '../support/probe-rule.ts';
import {
  insertLedger,
  insertLoad,
  insertTransactions,
  storeTestNotification,
} from '../support/recon-rows.ts';

/**
 * What a full run over most of the history reads whole (rangeHoldsMostOfHistory, reconcile/rules/scope.ts):
 * the latest notifications (want_nm, claims.ts) of every transaction of the account, in the
 * notifications' index order, and the range's provider rows through a view (scope_p) instead of a
 * copy; over a short range of a longer history, the scope's notifications only, and the copy.
 */

let h: DatabaseHandle;
const DAYS = ['2026-03-02', '2026-03-05', '2026-03-06'];
beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  const ids = DAYS.map((_, i) => `T-${i + 1}`);
  await insertTransactions(
    h.db,
    load,
    ids.map((id, i) => ({
      transaction_id: id,
      transaction_on: DAYS[i]!,
      transaction_at: `${DAYS[i]}T15:00:00Z`,
    })),
  );
  await insertLedger(
    h.db,
    ids.map((id, i) => ({ merchant_transaction_id: `M-${id}`, booked_at: `${DAYS[i]}T15:00:01Z` })),
  );
  for (const [i, id] of ids.entries())
    await storeTestNotification(h.db, id, `M-${id}`, {}, `${DAYS[i]}T15:00:05Z`);
});
afterAll(async () => h.close());

/**
 * A rule that reports, as a finding, how many transactions the run's want_nm holds while the run
 * reads it, whether scope_p is a copy (its work table) and how many rows it reads.
 */
const wantProbe = probeRule(
  'test_want_nm_probe',
  () => `(select (select count(*) from want_nm) as n, to_regclass('recon_work.run_scope_p') is not null as copied,
    (select count(*) from scope_p) as p) x`,
  ['n', 'copied', 'p'],
);

async function probed(from: string, to: string, now: string): Promise<string[]> {
  await reconcileRange(h.db, { from, to, now, full: true }, [...RULES, wantProbe]);
  const found = await sql<{ discrepancy_key: string }>`select discrepancy_key from discrepancies
    where rule = 'test_want_nm_probe' and last_seen_at = ${now}::timestamptz`.execute(h.db);
  return found.rows.map((r) => r.discrepancy_key);
}

describe('a full run over most of the history', () => {
  it("reads every transaction notification of the account, claims the scope's, reads the range's provider rows through a view", async () => {
    // Two of the history's three days: T-3's notification is read too, and claims nothing.
    expect(await probed('2026-03-02', '2026-03-05', '2026-03-20T12:00:00Z')).toEqual([
      'test_want_nm_probe:3:false:2',
    ]);
    const claims = await sql<{
      target_id: string;
    }>`select target_id from notification_matches order by 1`.execute(h.db);
    expect(claims.rows.map((r) => r.target_id)).toEqual(['T-1', 'T-2']);
  });

  it("over a short range of a longer history: the scope's notifications only, a copy of its provider rows", async () => {
    // One day of three.
    expect(await probed('2026-03-06', '2026-03-06', '2026-03-21T12:00:00Z')).toEqual([
      'test_want_nm_probe:1:true:1',
    ]);
  });
});

/**
 * The duplicate search (dup_m, rankDuplicates in scope.ts): over most of the history it counts the
 * ids of more than one of the account's rows and keeps the scope's; over a short range it is a semi
 * join from the scope's rows. Either way, the scope's ids that another row carries, in any range.
 */
describe('the duplicate merchant transaction ids', () => {
  let d: DatabaseHandle;
  beforeAll(async () => {
    d = await createTestDatabase();
    const load = await insertLoad(d.db, 'report-transactions');
    const row = (transaction_id: string, day: string, mtid = `M-${transaction_id}`) => ({
      transaction_id,
      merchant_transaction_id: mtid,
      transaction_on: day,
      transaction_at: `${day}T15:00:00Z`,
    });
    await insertTransactions(d.db, load, [
      row('T-1', '2026-03-02'),
      row('T-2', '2026-03-03'),
      row('T-3', '2026-03-04'),
      // M-T-2 twice within the range, M-T-1 once within it and once after it, M-OUT twice after it.
      row('T-2b', '2026-03-03', 'M-T-2'),
      row('T-1b', '2026-03-09', 'M-T-1'),
      row('T-8', '2026-03-09', 'M-OUT'),
      row('T-9', '2026-03-09', 'M-OUT'),
    ]);
  });
  afterAll(async () => d.close());

  const dupProbe = probeRule(
    'test_dup_m_probe',
    () => `(select coalesce(string_agg(mtid, ',' order by mtid), 'none') as ids,
      to_regclass('recon_work.run_scope_p') is not null as copied from dup_m) x`,
    ['ids', 'copied'],
  );

  async function duplicates(from: string, to: string, now: string): Promise<string[]> {
    await reconcileRange(d.db, { from, to, now, full: true }, [...RULES, dupProbe]);
    const found = await sql<{ discrepancy_key: string }>`select discrepancy_key from discrepancies
      where rule = 'test_dup_m_probe' and last_seen_at = ${now}::timestamptz`.execute(d.db);
    return found.rows.map((r) => r.discrepancy_key);
  }

  it("over most of the history: the scope's ids of more than one row, wherever the others are", async () => {
    // Three of the history's four days.
    expect(await duplicates('2026-03-02', '2026-03-04', '2026-03-20T12:00:00Z')).toEqual([
      'test_dup_m_probe:M-T-1,M-T-2:false',
    ]);
  });

  it('over a short range of a longer history: the same question from the scope', async () => {
    expect(await duplicates('2026-03-09', '2026-03-09', '2026-03-21T12:00:00Z')).toEqual([
      'test_dup_m_probe:M-OUT,M-T-1:true',
    ]);
  });
});
