import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createMigrator } from '../../db/migrate.ts';
import { dropAnalystLogin } from '../support/limited-analyst.ts';
import { createOddSettlementWarehouse } from '../support/settlement-odd-rows.ts';

/**
 * Migration 0037 rewrites settlement_items' provider branch as joins and makes the visibility
 * functions parallel safe (issue 30, section 2): the view's rows and daily_settlement_totals' are the
 * same before and after it, for the pipeline and for an analyst limited to one account, on two
 * accounts of sandbox history (returns, representments, adjustments) with the odd rows added below;
 * its down migration gives the view back as it was.
 */

let h: DatabaseHandle;
const LOGIN = `ana_items_${process.pid}`;
const MIGRATION = '0037_settlement_items_in_parallel';
const BEFORE = '0036_loader_notes_its_keys';

beforeAll(async () => {
  h = await createOddSettlementWarehouse(4242, LOGIN);
});
afterAll(async () => {
  await dropAnalystLogin(h.db, LOGIN);
  await h?.close();
});

const ORDERED = sql.raw('order by r::text');
const FREE_WORKERS = ['parallel_setup_cost', 'parallel_tuple_cost', 'min_parallel_table_scan_size'];

/** Every row of both views, as text, sorted: as the pipeline, or as the limited analyst; `parallel` forces parallel plans. */
async function rows(
  as: 'pipeline' | 'analyst',
  parallel = false,
): Promise<{ items: string[]; totals: string[] }> {
  return h.db.connection().execute(async (conn) => {
    if (parallel) await sql`set debug_parallel_query = on`.execute(conn);
    if (as === 'analyst') await sql`set role ${sql.id(LOGIN)}`.execute(conn);
    try {
      const items = await sql<{
        r: string;
      }>`select r::text as r from settlement_items r ${ORDERED}`.execute(conn);
      const totals = await sql<{
        r: string;
      }>`select r::text as r from daily_settlement_totals r ${ORDERED}`.execute(conn);
      return { items: items.rows.map((x) => x.r), totals: totals.rows.map((x) => x.r) };
    } finally {
      await sql`reset role`.execute(conn);
      await sql`reset debug_parallel_query`.execute(conn);
    }
  });
}

async function snapshot() {
  return { pipeline: await rows('pipeline'), analyst: await rows('analyst') };
}

describe('settlement_items after migration 0037', () => {
  it('holds every kind of item, on both accounts', async () => {
    const r = await sql<{ component: string; side: string; accounts: number }>`
      select component, side, count(distinct account)::int as accounts from settlement_items
      group by 1, 2 order by 1, 2`.execute(h.db);
    const seen = r.rows.map((x) => `${x.side} ${x.component} ${x.accounts}`);
    for (const kind of [
      'provider payin 2',
      'provider payout 2',
      'provider representment 2',
      'provider return 2',
      'provider adjustment 2',
      'provider unknown_type 2',
      'ledger payin 2',
      'ledger return 2',
      'ledger adjustment 2',
    ])
      expect(seen).toContain(kind);
    const flight = await sql<{
      n: number;
    }>`select count(*)::int as n from settlement_items where in_flight`.execute(h.db);
    expect(flight.rows[0]!.n).toBeGreaterThanOrEqual(2);
  });

  it('reads no item through a subquery per row, and its functions are parallel safe', async () => {
    const plan = await sql<{
      'QUERY PLAN': string;
    }>`explain select * from settlement_items where business_date between '2026-12-20' and '2027-01-03'`.execute(
      h.db,
    );
    expect(plan.rows.map((x) => x['QUERY PLAN']).join('\n')).not.toContain('SubPlan');
    const f = await sql<{ proname: string; proparallel: string }>`
      select proname, proparallel from pg_proc where proname in ('sees_every_account', 'account_visible')
      order by 1`.execute(h.db);
    expect(f.rows).toEqual([
      { proname: 'account_visible', proparallel: 's' },
      { proname: 'sees_every_account', proparallel: 's' },
    ]);
  });

  it('can be read by parallel workers', async () => {
    const plan = await h.db.connection().execute(async (conn) => {
      // Parallel plans at any size: the test's few rows would never pay for workers otherwise.
      for (const setting of FREE_WORKERS) await sql`select set_config(${setting}, '0', false)`.execute(conn);
      try {
        return await sql<{ 'QUERY PLAN': string }>`explain select * from settlement_items`.execute(conn);
      } finally {
        for (const setting of FREE_WORKERS) await sql`reset ${sql.id(setting)}`.execute(conn);
      }
    });
    expect(plan.rows.map((x) => x['QUERY PLAN']).join('\n')).toContain('Gather');
  });

  it("leaves none of the roll-forward's work tables after a run", async () => {
    const r = await sql<{ n: number }>`select count(*)::int as n from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'recon_work' and c.relname like 'run\\_settlement\\_%'`.execute(h.db);
    expect(r.rows[0]!.n).toBe(0);
  });

  it('gives a limited analyst the same rows in parallel workers, and only its account', async () => {
    const serial = await rows('analyst');
    expect(await rows('analyst', true)).toEqual(serial);
    expect(serial.items.length).toBeGreaterThan(100);
    expect(serial.items.every((r) => r.startsWith('(ca-main,'))).toBe(true);
    expect(serial.totals.every((r) => r.startsWith('(ca-main,'))).toBe(true);
  });

  it('has the rows of the view before it, and its down migration gives that view back', async () => {
    const after = await snapshot();
    expect(after.pipeline.items.length).toBeGreaterThan(after.analyst.items.length);
    const migrator = createMigrator(h.db);
    // Down to the migration before it: later migrations (0040, …) go down first, 0037 last.
    const down = await migrator.migrateTo(BEFORE);
    expect(down.error).toBeUndefined();
    expect(down.results?.map((r) => r.migrationName).at(-1)).toBe(MIGRATION);
    const plan = await sql<{ 'QUERY PLAN': string }>`explain select * from settlement_items`.execute(h.db);
    expect(plan.rows.map((x) => x['QUERY PLAN']).join('\n')).toContain('SubPlan');
    expect(await snapshot()).toEqual(after);
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(await snapshot()).toEqual(after);
  });

  it('finds settlement_unexplained for exactly the days whose totals nothing explains', async () => {
    const found = await sql<{ r: string }>`
      select account || ' ' || business_date || ' ' || currency || ' ' || difference_cents as r
      from discrepancies where kind = 'settlement_unexplained' and resolved_at is null order by 1`.execute(
      h.db,
    );
    const totals = await sql<{ r: string }>`
      select account || ' ' || business_date || ' ' || currency || ' ' || unexplained_cents as r
      from daily_settlement_totals where unexplained_cents <> 0 order by 1`.execute(h.db);
    expect(found.rows.length).toBeGreaterThan(0);
    expect(found.rows).toEqual(totals.rows);
  });
});
