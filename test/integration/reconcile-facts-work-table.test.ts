import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import type { Rule } from '../../reconcile/rules/rule.ts';
import { RULES } from '../../reconcile/rules/run-rules.ts';
import { WORK_TABLES, workTable } from '../../reconcile/rules/work-tables.ts';
import { createTestDatabase } from '../support/database.ts';
import { probeRule } from '../support/probe-rule.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [{ transaction_id: 'T-1', notify_status: null }]);
  await insertLedger(h.db, [{ merchant_transaction_id: 'M-T-1' }]);
});
afterAll(async () => h.close());

const RANGE = { from: '2026-03-02', to: '2026-03-02' };

/**
 * A rule that reports, as a finding, how the run's facts are stored while the run reads them: its
 * persistence (`u` for UNLOGGED, `t` for TEMP) and the number of rows in it.
 */
const factsProbe = probeRule(
  'test_facts_probe',
  () => `(select c.relpersistence::text as persistence, n.nspname::text as schema,
    (select count(*) from facts) as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.oid = (select oid from pg_class where relname = 'run_facts' and relpersistence <> 't' limit 1)) x`,
  ['schema', 'persistence', 'n'],
);

/**
 * A rule that reports, as a finding, the run's tables of the private schema while the run reads
 * them (each with its persistence) and the size of its provider rows' scope as read through scope_p.
 */
const workTablesProbe = probeRule(
  'test_work_tables_probe',
  () => `(select string_agg(c.relname || ':' || c.relpersistence::text, ',' order by c.relname) as tables,
    (select count(*) from scope_p) as n
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'recon_work' and c.relname like 'run\\_%' and c.relkind = 'r') x`,
  ['tables', 'n'],
);

async function workTablesLeft(): Promise<string[]> {
  const left = await sql<{ t: string | null }>`
    select to_regclass(t)::text as t from unnest(${WORK_TABLES.map(workTable)}::text[]) t`.execute(h.db);
  return left.rows.flatMap((r) => (r.t === null ? [] : [r.t]));
}

describe("the run's work tables", () => {
  it('are UNLOGGED tables of the private schema while a full run reads them, the scope among them; gone after it', async () => {
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-19T12:00:00Z', full: true }, [
      ...RULES,
      workTablesProbe,
    ]);
    const found = await sql<{ discrepancy_key: string }>`
      select discrepancy_key from discrepancies where rule = 'test_work_tables_probe'`.execute(h.db);
    // Except the settlement window, which the roll-forward of a full run keeps: renamed
    // recon_work.settlement_kept_items (reconcile/rules/settlement-kept.ts), UNLOGGED too; and
    // scope_p, a view of the range's provider rows in a run over most of the history (its one day
    // here: reconcile/rules/scope.ts), which still reads the range's one row.
    const expected = [...WORK_TABLES]
      .filter((t) => t !== 'settlement_window' && t !== 'scope_p')
      .map((t) => `run_${t}:u`)
      .sort()
      .join(',');
    expect(found.rows.map((r) => r.discrepancy_key)).toEqual([`test_work_tables_probe:${expected}:1`]);
    // Among them the sets whose statements scan every fact or the scope's ledger (issue 30): the
    // suspects, the stale claims, the duplicate ids and the ledger entries no fact answers for
    // (missing_at_provider).
    const tables = found.rows[0]!.discrepancy_key.replace(/^test_work_tables_probe:|:\d+$/g, '').split(',');
    expect(tables).toEqual(
      expect.arrayContaining(
        ['suspects', 'stale_notification_matches', 'stale_transaction_matches', 'dup_m', 'unanswered_l'].map(
          (t) => `run_${t}:u`,
        ),
      ),
    );
    expect(await workTablesLeft()).toEqual([]);
    const kept = await sql<{ p: string }>`select relpersistence::text as p from pg_class
      where oid = 'recon_work.settlement_kept_items'::regclass`.execute(h.db);
    expect(kept.rows[0]!.p).toBe('u');
  });
});

describe("the run's facts", () => {
  it('are an UNLOGGED table of the private schema while the run reads them (parallel readers), gone after it', async () => {
    await reconcileRange(h.db, { ...RANGE, now: '2026-03-20T12:00:00Z' }, [...RULES, factsProbe]);
    const found = await sql<{ discrepancy_key: string }>`
      select discrepancy_key from discrepancies where rule = 'test_facts_probe'`.execute(h.db);
    expect(found.rows.map((r) => r.discrepancy_key)).toEqual(['test_facts_probe:recon_work:u:1']);
    // Nothing of one run is left for the next: the table lives and dies in the run's transaction.
    const left = await sql<{
      t: string | null;
    }>`select to_regclass(${workTable('facts')})::text as t`.execute(h.db);
    expect(left.rows[0]!.t).toBeNull();
  });

  it('are gone after a run that fails, and the next run builds its own', async () => {
    const failing: Rule = { ...factsProbe, name: 'test_fails', when: () => '1 / 0 = 1' };
    await expect(
      reconcileRange(h.db, { ...RANGE, now: '2026-03-21T12:00:00Z' }, [...RULES, failing]),
    ).rejects.toThrow(/division by zero/);
    const left = await sql<{
      t: string | null;
    }>`select to_regclass(${workTable('facts')})::text as t`.execute(h.db);
    expect(left.rows[0]!.t).toBeNull();
    expect(await workTablesLeft()).toEqual([]);
    const summary = await reconcileRange(h.db, { ...RANGE, now: '2026-03-22T12:00:00Z' });
    expect(summary.matched.transactions).toBe(1);
  });
});
