import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadReport } from '../../ingest/load/load-report.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  bytesOf,
  fakeParser,
  legacyTransaction,
  legacyType5File,
  legacyType5Request,
  reportRequest,
  returnRecord,
  transaction,
} from '../support/ingest-records.ts';
import {
  insertLedger,
  insertLoad,
  insertReturns,
  insertTransactions,
  storeTestNotification,
} from '../support/recon-rows.ts';

// Every write to a table matching reads notes the keys it changed (migration 0027), in the writer's
// transaction: what a reconcile run after it must look at again (reconcile/incremental.ts).

const h = useTestDatabase();

beforeEach(async () => {
  await sql`truncate provider_transactions, provider_returns, merchant_ledger, notifications, discrepancies cascade`.execute(
    h.db,
  );
  await sql`truncate recon_work.changed_keys`.execute(h.db);
});

/** How many keys of each array recon_work.changed_keys holds, duplicates counted. */
async function noted(): Promise<{ t: number; m: number; r: number }> {
  const r = await sql<{ t: number; m: number; r: number }>`select
      coalesce(sum(cardinality(transaction_ids)), 0)::int as t,
      coalesce(sum(cardinality(merchant_transaction_ids)), 0)::int as m,
      coalesce(sum(cardinality(return_transaction_ids)), 0)::int as r
    from recon_work.changed_keys`.execute(h.db);
  return r.rows[0]!;
}

const legacyFile = (ids: readonly number[], amount = (i: number) => 300 + i) =>
  legacyType5File(
    ids.map((i) =>
      legacyTransaction({
        transaction_id: `L${i}`,
        merchant_transaction_id: `LM${i}`,
        amount_cents: amount(i),
      }),
    ),
  );

const legacyLoad = (file: ReturnType<typeof bytesOf>) =>
  loadReport(h, legacyType5Request({ batchRows: 3 }), file);

const keysOf = (prefix: string, ids: readonly number[]) =>
  ids.flatMap((i) => [`merchant_transaction_id=${prefix}M${i}`, `transaction_id=${prefix}${i}`]).sort();

async function changed(): Promise<string[]> {
  const r = await sql<{
    k: string;
  }>`select kind || '=' || coalesce(key, '') as k from recon_work.changed_keys c
    cross join lateral (select 'transaction_id', unnest(c.transaction_ids)
      union all select 'merchant_transaction_id', unnest(c.merchant_transaction_ids)
      union all select 'return_transaction_id', unnest(c.return_transaction_ids)
      union all select 'all', null where c.whole) x (kind, key)
    order by 1`.execute(h.db);
  const out = r.rows.map((x) => x.k);
  await sql`truncate recon_work.changed_keys`.execute(h.db);
  return [...new Set(out)];
}

/**
 * No date with a matching state; T1 and T2 on `on`'s dates, their ledger entries M-T1 and M-T2 booked
 * on `booked`'s (15:00 UTC). Returns the provider load.
 */
async function twoTransactions(
  on: readonly [string, string],
  booked: readonly [string, string],
): Promise<number> {
  await sql`truncate recon_work.matched_days`.execute(h.db);
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(
    h.db,
    load,
    on.map((day, i) => ({
      transaction_id: `T${i + 1}`,
      transaction_at: `${day}T15:00:00Z`,
      transaction_on: day,
    })),
  );
  await insertLedger(
    h.db,
    booked.map((day, i) => ({ merchant_transaction_id: `M-T${i + 1}`, booked_at: `${day}T15:00:00Z` })),
  );
  return load;
}

describe('changed keys', () => {
  it('a load, an update and a delete of provider rows note their keys before and after', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [{ transaction_id: 'T1' }, { transaction_id: 'T2' }]);
    expect(await changed()).toEqual([
      'merchant_transaction_id=M-T1',
      'merchant_transaction_id=M-T2',
      'transaction_id=T1',
      'transaction_id=T2',
    ]);
    await sql`update provider_transactions set merchant_transaction_id = 'M-X' where transaction_id = 'T1'`.execute(
      h.db,
    );
    expect(await changed()).toEqual([
      'merchant_transaction_id=M-T1',
      'merchant_transaction_id=M-X',
      'transaction_id=T1',
    ]);
    await sql`delete from provider_transactions where transaction_id = 'T2'`.execute(h.db);
    expect(await changed()).toEqual(['merchant_transaction_id=M-T2', 'transaction_id=T2']);
  });

  it('ledger entries, returns and notifications note what the rules join them on', async () => {
    await insertLedger(h.db, [
      {
        merchant_transaction_id: 'M-R',
        transaction_type: 'RETURN',
        transaction_id: 'R1',
        original_merchant_transaction_id: 'M-O',
      },
    ]);
    expect(await changed()).toEqual([
      'merchant_transaction_id=M-O',
      'merchant_transaction_id=M-R',
      'return_transaction_id=R1',
      'transaction_id=R1',
    ]);
    const load = await insertLoad(h.db, 'report-returns');
    await insertReturns(h.db, load, [
      { return_transaction_id: 'R2', original_transaction_id: 'T9', merchant_transaction_id: 'M-9' },
    ]);
    expect(await changed()).toEqual([
      'merchant_transaction_id=M-9',
      'return_transaction_id=R2',
      'transaction_id=T9',
    ]);
    await storeTestNotification(h.db, 'T5', 'M-5');
    expect(await changed()).toEqual([
      'merchant_transaction_id=M-5',
      'return_transaction_id=T5',
      'transaction_id=T5',
    ]);
  });

  it('a write no key can tell (the fee schedule, a truncate) asks for a full run', async () => {
    await sql`update fee_schedule set fixed_cents = fixed_cents where false`.execute(h.db);
    expect(await changed()).toEqual(['all=']);
    await sql`truncate notifications cascade`.execute(h.db);
    expect(await changed()).toEqual(['all=']);
  });

  it('a person resolving a discrepancy notes its keys; a run’s own updates do not', async () => {
    await sql`insert into discrepancies (discrepancy_key, kind, rule, transaction_id, merchant_transaction_id,
      business_date, status, first_seen_at, last_seen_at)
      values ('missing_in_ledger:T7', 'missing_in_ledger', 'transaction_vs_ledger', 'T7', 'M-7', '2026-03-02', 'open', now(), now())`.execute(
      h.db,
    );
    await sql`update discrepancies set note = 'looked at'`.execute(h.db);
    expect(await changed()).toEqual([]);
    await sql`update discrepancies set resolved_at = now(), resolution = 'fixed_in_ledger', status = 'resolved'`.execute(
      h.db,
    );
    expect(await changed()).toEqual(['merchant_transaction_id=M-7', 'transaction_id=T7']);
    await h.db.transaction().execute(async (trx) => {
      await sql`select set_config('recon.run_account', 'default', true)`.execute(trx);
      await sql`update discrepancies set resolved_at = null, resolution = null, status = 'open'`.execute(trx);
    });
    expect(await changed()).toEqual([]);
  });

  it('the loader notes the keys of the rows it copies itself, each once, and the merge’s are noted as before', async () => {
    // 7 new lines in COPYs of 3: a legacy row and its projection carry the same transaction id.
    expect(await legacyLoad(legacyFile([0, 1, 2, 3, 4, 5, 6]))).toMatchObject({ rowsInserted: 7 });
    expect(await noted()).toEqual({ t: 7, m: 7, r: 0 });
    expect(await changed()).toEqual(keysOf('L', [0, 1, 2, 3, 4, 5, 6]));
    // 7..9 new (a COPY), then 10 new and 2 restated: that COPY meets a stored key and is merged.
    const summary = await legacyLoad(legacyFile([7, 8, 9, 10, 2], (i) => (i === 2 ? 1 : 300 + i)));
    expect(summary).toMatchObject({ rowsInserted: 4, rowsUpdated: 1 });
    expect(await changed()).toEqual(keysOf('L', [10, 2, 7, 8, 9]));
    // The same file again changes nothing, and notes nothing.
    await legacyLoad(legacyFile([7, 8, 9, 10, 2], (i) => (i === 2 ? 1 : 300 + i)));
    expect(await changed()).toEqual([]);
  });

  it('a COPY’s keys are stored uncompressed (migration 0045: compressing them held the COPY up)', async () => {
    // Ids no other test of this file loads (legacy_transactions is not emptied between tests).
    const ids = Array.from({ length: 800 }, (_, i) => 10_000 + i);
    await loadReport(
      h,
      reportRequest({ source: 'legacy-transactions', format: 'legacy', queryType: '5' }),
      legacyFile(ids),
    );
    expect(await noted()).toEqual({ t: 800, m: 800, r: 0 });
    const r = await sql<{ compressed: string | null; bytes: number }>`select
        coalesce(pg_column_compression(transaction_ids), pg_column_compression(merchant_transaction_ids)) as compressed,
        pg_column_size(transaction_ids) as bytes
      from recon_work.changed_keys`.execute(h.db);
    // Large enough to be compressed had the column allowed it (PostgreSQL tries above about 2 kB).
    expect(r.rows.every((x) => x.bytes > 2048)).toBe(true);
    expect(r.rows.map((x) => x.compressed)).toEqual(r.rows.map(() => null));
  });

  it('keys with quotes, apostrophes, backslashes, braces, commas, spaces or the word NULL are noted as they are written', async () => {
    const odd = ['T"1', 'T\\2', 'T{3},', ' T 4 ', 'NULL', 'T\\"5\\', "T'6", "T\\'7''"];
    const records = odd.map((id, i) =>
      transaction({ transaction_id: id, merchant_transaction_id: `M${i}${id}` }),
    );
    await loadReport(h, reportRequest({}), bytesOf('x'), fakeParser(records));
    const stored = await h.db.selectFrom('provider_transactions').select('transaction_id').execute();
    expect(stored.map((r) => r.transaction_id).sort()).toEqual([...odd].sort());
    expect((await changed()).sort()).toEqual(
      [
        ...odd.map((id) => `transaction_id=${id}`),
        ...odd.map((id, i) => `merchant_transaction_id=M${i}${id}`),
      ].sort(),
    );
  });

  it('a report load notes its transactions’ and returns’ keys as the triggers do, a failed one none', async () => {
    const records = [
      transaction({ transaction_id: 'T1', merchant_transaction_id: 'M-1' }),
      transaction({ transaction_id: 'T2', merchant_transaction_id: null }),
    ];
    await loadReport(h, reportRequest({ batchRows: 1 }), bytesOf('x'), fakeParser(records));
    expect(await noted()).toEqual({ t: 2, m: 1, r: 0 });
    expect(await changed()).toEqual([
      'merchant_transaction_id=M-1',
      'transaction_id=T1',
      'transaction_id=T2',
    ]);
    const returns = [returnRecord({ return_transaction_id: 'R1', original_transaction_id: 'T1' })];
    const req = reportRequest({ source: 'report-returns', queryType: 'RETURN' });
    await loadReport(h, req, bytesOf('x'), fakeParser(returns));
    expect(await changed()).toEqual([
      'merchant_transaction_id=MT1',
      'return_transaction_id=R1',
      'transaction_id=T1',
    ]);
    const broken = [returnRecord({ return_transaction_id: 'R2' }), new Error('the file ends half-way')];
    await expect(loadReport(h, req, bytesOf('x'), fakeParser(broken))).rejects.toThrow();
    expect(await changed()).toEqual([]);
  });
  it('a run notes the claims it makes of entries booked on another day once that day has a matching state', async () => {
    // Each entry is booked two days after the provider row that claims it, outside that row's run.
    await twoTransactions(['2026-03-02', '2026-03-06'], ['2026-03-04', '2026-03-08']);
    await changed();
    const run = (day: string) => reconcileRange(h.db, { from: day, to: day, now: '2026-03-20T12:00:00Z' });
    // No date outside the run's has a state: no run over changed keys can read a note (claim-moves.ts).
    await run('2026-03-02');
    expect(await changed()).toEqual([]);
    await run('2026-03-08');
    expect(await changed()).toEqual([]);
    // 03-08 has one now: its next run over changed keys must look at the entry 03-06's run claimed.
    await run('2026-03-06');
    expect(await changed()).toEqual(['merchant_transaction_id=M-T2']);
  });
  it('a run looks at the keys written since each date’s last run: a date matched long ago is looked at whole, not by every key written since', async () => {
    const load = await twoTransactions(['2026-03-02', '2026-03-03'], ['2026-03-02', '2026-03-03']);
    const at = { now: '2026-03-20T12:00:00Z' };
    expect((await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', ...at })).scope).toBe('full');
    // Other days' loads (40 keys), and one change of 03-02's ledger entry; then 03-03 alone is matched.
    await insertTransactions(
      h.db,
      load,
      Array.from({ length: 20 }, (_, i) => ({ transaction_id: `X${i}`, transaction_on: '2026-03-12' })),
    );
    await sql`update merchant_ledger set amount_cents = 990 where merchant_transaction_id = 'M-T1'`.execute(
      h.db,
    );
    await reconcileRange(h.db, { from: '2026-03-03', to: '2026-03-03', ...at });
    // 03-02's last run saw none of those writes, 03-03's all: 03-02 is looked at whole (one provider
    // row against 44 keys), and no key is gathered for the range.
    const run = await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', ...at });
    expect(run).toMatchObject({ scope: 'incremental', changedKeys: 0 });
    const found = async () =>
      (
        await sql<{ k: string }>`select discrepancy_key || ' ' || status as k from discrepancies
          where business_date between '2026-03-02' and '2026-03-03' order by 1`.execute(h.db)
      ).rows.map((r) => r.k);
    const incremental = await found();
    expect(incremental.some((k) => k.includes('M-T1') || k.includes('T1'))).toBe(true);
    await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', ...at, full: true });
    expect(await found()).toEqual(incremental);
  });
});
