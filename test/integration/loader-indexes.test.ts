import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRows, insertBenchLoad } from '../../bench/generate-rows.ts';
import { INDEX_USES, planUse } from '../../bench/index-plans.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * Migration 0028: the indexes of the tables the legacy loader writes are the ones a query needs, in
 * their cheapest form (docs/architecture.md, "Indexes of the provider tables").
 */
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase(1);
  await insertBenchLoad(h.db);
  await generateRows(h.db, 1, 30_000, '2026-03-01 05:00:00+00', 30 * 86_400);
  await sql`update provider_transactions set status = 'PENDING', raw_status = 'PENDING'
    where substr(transaction_id, 2)::int % 100 = 0`.execute(h.db);
  // Legacy rows written a day at a time, as loads of daily windows write them.
  await sql`insert into legacy_transactions (transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id,
      amount_cents, currency, status, raw_status, transaction_at, query_type, load_id, first_load_id, raw)
    select transaction_id, transaction_on, raw_transaction_type, merchant_transaction_id, amount_cents, currency, status,
      raw_status, transaction_at, '5', 1, 1, '' from provider_transactions order by transaction_on, transaction_id`.execute(
    h.db,
  );
  await sql`vacuum analyze provider_transactions, legacy_transactions`.execute(h.db);
}, 120_000);
afterAll(async () => h?.close());

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

  it('every index the bench justifies exists, and is used by its query', async () => {
    for (const use of INDEX_USES.filter((u) => u.index !== 'provider_transactions_pending_idx')) {
      expect(await indexDefinition(use.index), use.index).not.toBeNull();
      const plans = await planUse(h.db, use);
      expect(plans.split('-- without')[0], use.reader).toContain(use.index);
    }
  });
});
