import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRows, insertBenchLoad } from '../../bench/generate-rows.ts';
import { ANALYST_USES, INDEX_USES, type IndexUse, planUse } from '../../bench/index-plans.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * Migrations 0028 and 0042: the indexes of the tables the legacy loader writes are the ones a query
 * needs, in their cheapest form (docs/architecture.md, "Indexes of the provider tables").
 */
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(1);
  await insertBenchLoad(h.db);
  await generateRows(h.db, 1, 30_000, '2026-03-01 05:00:00+00', 30 * 86_400, { duplicates: true });
  await sql`update provider_transactions set status = 'PENDING', raw_status = 'PENDING'
    where substr(transaction_id, 2)::int % 100 = 0`.execute(h.db);
  // Legacy rows written a day at a time, as loads of daily windows write them.
  await sql`insert into legacy_transactions (transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id,
      amount_cents, currency, status, raw_status, transaction_at, query_type, load_id, first_load_id, raw)
    select transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id, amount_cents, currency, status,
      raw_status, transaction_at, '5', 1, 1, '' from provider_transactions order by transaction_on, transaction_id`.execute(
    h.db,
  );
  // Every table vacuumed and analysed now, each read whole, so that autovacuum finds nothing to do
  // later. Left to it, merchant_ledger and notifications (written above, never analysed) were
  // analysed a minute or two after they were written, within the tests when the machine was slow,
  // and the roll-forward's plan changed: with the ledger's statistics its matched entries' anti join
  // hashed all of provider_transactions by key. The writes' counts are flushed to the statistics
  // first (the pool's one connection made them), or they would arrive after the analysis and call
  // autovacuum back. A statistics target of 250 samples 75,000 rows, more than any table holds here
  // (legacy_transactions 60,062): each analysis sees every row, the same statistics every run.
  await h.db.connection().execute(async (c) => {
    await sql`select pg_stat_force_next_flush()`.execute(c);
    await sql`set default_statistics_target = 250`.execute(c);
    await sql`vacuum analyze`.execute(c);
    await sql`reset default_statistics_target`.execute(c);
  });
}, 120_000);
afterAll(async () => h?.close());

/**
 * The plans of `use` as the schema is and without its index, without planUse's headers (they name the
 * index) and without the index's other form.
 */
async function plansOf(use: IndexUse): Promise<{ withIndex: string; without: string }> {
  const [withIndex, without] = (await planUse(h.db, use)).split('-- without');
  return {
    withIndex: withIndex!.split('\n').slice(3).join('\n'),
    without: without!.split('\n-- with ')[0]!,
  };
}

/** provider_transactions read whole where a query wants some of its days: what its BRIN index spares. */
const DAYS_READ_WHOLE = /Seq Scan on provider_transactions\b[^\n]*\n\s*Filter: [^\n]*transaction_on/;

async function indexDefinition(name: string): Promise<string | null> {
  const r = await sql<{ def: string | null }>`select pg_get_indexdef(to_regclass(${name})) as def`.execute(
    h.db,
  );
  return r.rows[0]?.def ?? null;
}

describe('indexes of the tables the legacy loader writes', () => {
  it("legacy_transactions' days are a BRIN index, and a window's rows per day are read through it", async () => {
    expect(await indexDefinition('legacy_transactions_on_idx')).toMatch(/USING brin \(transaction_on\)/);
    const use = INDEX_USES.find((u) => u.index === 'legacy_transactions_on_idx')!;
    const plans = await planUse(h.db, use);
    const withIndex = plans.split('-- without')[0]!;
    expect(withIndex).toMatch(/Bitmap Index Scan on legacy_transactions_on_idx/);
    // The block ranges of three days out of thirty: most of the table is not read.
    const blocks = Number(/Heap Blocks: (?:exact=\d+ )?lossy=(\d+)/.exec(withIndex)?.[1] ?? 'NaN');
    const total = await sql<{
      n: number;
    }>`select relpages::int as n from pg_class where relname = 'legacy_transactions'`.execute(h.db);
    expect(blocks).toBeLessThan(total.rows[0]!.n / 4);
  });

  it('provider_transactions_pending_idx is gone: the follow-up reads the non-final index', async () => {
    expect(await indexDefinition('provider_transactions_pending_idx')).toBeNull();
    const use = INDEX_USES.find((u) => u.index === 'provider_transactions_non_final_idx')!;
    const plans = await planUse(h.db, use);
    expect(plans.split('-- without')[0]).toMatch(/Index Scan using provider_transactions_non_final_idx/);
  });

  it("provider_transactions' days are a BRIN index: a run's window and a day's roll-forward read it", async () => {
    expect(await indexDefinition('provider_transactions_on_idx')).toMatch(/USING brin \(transaction_on\)/);
    for (const use of [...INDEX_USES, ...ANALYST_USES].filter(
      (u) => u.index === 'provider_transactions_on_idx',
    )) {
      const { withIndex, without } = await plansOf(use);
      expect(withIndex, use.reader).toMatch(/Bitmap Index Scan on provider_transactions_on_idx/);
      // Every read of its days goes through the index (a join on the key may hash the whole table,
      // which 30,000 rows make cheap), and the check tells: without the index the days are read whole.
      expect(withIndex, use.reader).not.toMatch(DAYS_READ_WHOLE);
      expect(without, use.reader).toMatch(DAYS_READ_WHOLE);
    }
  });

  it("the overview's span of days reads provider_transaction_days, not provider_transactions", async () => {
    const use = INDEX_USES.find((u) => u.index === 'provider_transaction_days_pkey')!;
    const withIndex = (await planUse(h.db, use)).split('-- without')[0]!;
    expect(withIndex).not.toMatch(/on provider_transactions\b/);
    const span = await sql<{ first: string; last: string }>`select min(transaction_on)::text as first,
      max(transaction_on)::text as last from provider_transactions`.execute(h.db);
    const kept = await h.db.executeQuery(sql`${sql.raw(use.query)}`.compile(h.db));
    expect(Object.values(kept.rows[0] as object).map(String)).toEqual([
      span.rows[0]!.first,
      span.rows[0]!.last,
    ]);
  });

  it('merchant transaction ids stay a B-tree, read by missing_at_provider, changed keys and the discrepancy page', async () => {
    expect(await indexDefinition('provider_transactions_mtid_idx')).toMatch(
      /USING btree \(account, merchant_transaction_id\)/,
    );
    const uses = INDEX_USES.filter((u) => u.index === 'provider_transactions_mtid_idx');
    expect(uses.length).toBe(4);
    for (const use of uses.filter((u) => !u.reader.includes('dup_m'))) {
      const withIndex = (await planUse(h.db, use)).split('-- without')[0]!;
      expect(withIndex, use.reader).toMatch(/Scan (on|using) provider_transactions_mtid_idx/);
    }
  });

  it('every index the bench justifies exists, and is used by its query', async () => {
    // The duplicate search hashes a window that is a tenth of the table (it probes the index over a
    // long history: reconcile-window-cost.test.ts); the span of days reads a table of a few rows.
    const probed = (u: IndexUse) =>
      u.index !== 'provider_transactions_pending_idx' &&
      u.index !== 'provider_transaction_days_pkey' &&
      !u.reader.includes('dup_m');
    for (const use of INDEX_USES.filter(probed)) {
      expect(await indexDefinition(use.index), use.index).not.toBeNull();
      expect((await plansOf(use)).withIndex, use.reader).toContain(use.index);
    }
  });
});
