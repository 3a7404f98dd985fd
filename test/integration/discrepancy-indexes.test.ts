import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCREPANCY_INDEX_USES, insertHistory } from '../../bench/discrepancy-index-plans.ts';
import { planUse } from '../../bench/index-plans.ts';
import type { DiscrepancyFilter } from '../../reconcile/discrepancies/filter.ts';
import { listDiscrepancies, worklistPage } from '../../reconcile/discrepancies/read.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * Migration 0044: every secondary index of discrepancies is one a query needs, and every run writes
 * into each (docs/architecture.md, "Indexes of the discrepancies").
 */
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(1);
  await insertHistory(h.db, 60_000);
}, 120_000);
afterAll(async () => h?.close());

/** The definitions of the indexes of discrepancies and discrepancy_events, by name. */
async function definitions(): Promise<Map<string, string>> {
  const r = await sql<{ name: string; def: string }>`select indexname as name, indexdef as def from pg_indexes
    where schemaname = 'public' and tablename in ('discrepancies', 'discrepancy_events')`.execute(h.db);
  return new Map(r.rows.map((x) => [x.name, x.def]));
}

describe('indexes of discrepancies', () => {
  it('the rule, kind and unresolved days indexes are one, on the rule and the day', async () => {
    const defs = await definitions();
    for (const gone of ['discrepancies_rule_idx', 'discrepancies_kind_idx', 'discrepancies_open_idx'])
      expect(defs.has(gone), gone).toBe(false);
    expect(defs.get('discrepancies_rule_day_idx')).toMatch(/USING btree \(rule, business_date\)/);
  });

  it('the worklist order is indexed for the unresolved and the resolved apart, not over every row (0054)', async () => {
    const defs = await definitions();
    expect(defs.has('discrepancies_worklist_all_idx')).toBe(false);
    expect(defs.get('discrepancies_worklist_resolved_idx')).toMatch(/WHERE \(resolved_at IS NOT NULL\)$/);
    expect(defs.get('discrepancies_worklist_idx')).toMatch(/WHERE \(resolved_at IS NULL\)$/);
  });

  it('the worklist of every status merges the two in the worklist order, page by page both ways', async () => {
    // Every status of one currency and kind over half a year (about 1,000 rows, a tenth resolved), as
    // one sort gives them.
    const filter: DiscrepancyFilter = {
      status: 'all',
      currency: 'CAD',
      kinds: ['amount_mismatch'],
      from: '2025-01-01',
      to: '2025-06-30',
    };
    const expected = await sql<{ id: number }>`select discrepancy_id::int as id from discrepancies
      where currency = 'CAD' and kind = 'amount_mismatch' and business_date between '2025-01-01' and '2025-06-30'
      order by coalesce(currency, ''), (-stake_cents), coalesce(business_date, 'infinity'::date), discrepancy_id`.execute(
      h.db,
    );
    const all = expected.rows.map((r) => r.id);
    expect(all.length).toBeGreaterThan(100);
    expect(
      new Set(
        (await listDiscrepancies(h.db, filter, { order: 'worklist' })).map((d) => d.resolved_at === null),
      ),
    ).toEqual(new Set([true, false]));
    expect(
      (await listDiscrepancies(h.db, filter, { order: 'worklist' })).map((d) => Number(d.discrepancy_id)),
    ).toEqual(all);
    const forwards: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await worklistPage(h.db, filter, { limit: 37, ...(cursor ? { cursor } : {}) });
      forwards.push(...page.items.map((d) => Number(d.discrepancy_id)));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(forwards).toEqual(all);
    // The page before a cursor (the 200th row's), read backwards on the same indexes.
    const at = 200;
    const mid = await worklistPage(h.db, filter, { limit: at });
    const back = await worklistPage(h.db, filter, { limit: 37, before: mid.next_cursor! });
    expect(back.items.map((d) => Number(d.discrepancy_id))).toEqual(all.slice(at - 1 - 37, at - 1));
  });

  it('each secondary index is read by the query that needs it', async () => {
    // Every index but the keys (the primary keys and the discrepancy key: what a run looks up).
    const secondary = [...(await definitions()).keys()].filter(
      (n) => !n.endsWith('_pkey') && n !== 'discrepancies_discrepancy_key_key',
    );
    const justified = new Set(DISCREPANCY_INDEX_USES.map((u) => u.index));
    expect(secondary.filter((n) => !justified.has(n))).toEqual([]);
    for (const use of DISCREPANCY_INDEX_USES) {
      // The plan as the schema is, without planUse's three lines of headers (they name the index).
      const withIndex = (await planUse(h.db, use)).split('-- without')[0]!.split('\n').slice(3).join('\n');
      expect(withIndex, use.reader).toMatch(new RegExp(`Scan (on|using) ${use.index}\\b`));
      expect(withIndex, use.reader).not.toMatch(/Seq Scan on discrepancies/);
    }
  });
});
