import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCREPANCY_INDEX_USES, insertHistory } from '../../bench/discrepancy-index-plans.ts';
import { planUse } from '../../bench/index-plans.ts';
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
