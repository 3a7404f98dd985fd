import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// A run drops the change log's rows no run needs any more (reconcile/seen-changes.ts): truncated
// when every row is one and no writer holds the log, deleted otherwise; a change some date's last
// run did not see is kept either way, and a writer of keys never holds the run up. Which rows the
// delete drops depends on the transactions of the whole server (other test files' among them), so
// only the truncate's outcome is asserted exactly.

const h = useTestDatabase();
const at = { now: '2026-03-20T12:00:00Z' };

beforeEach(async () => {
  await sql`truncate provider_transactions, merchant_ledger, discrepancies, recon_work.matched_days,
    recon_work.changed_keys cascade`.execute(h.db);
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T1', transaction_on: '2026-03-02', transaction_at: '2026-03-02T15:00:00Z' },
    { transaction_id: 'T2', transaction_on: '2026-03-03', transaction_at: '2026-03-03T15:00:00Z' },
  ]);
  await insertLedger(h.db, [{ merchant_transaction_id: 'M-T1' }]);
});

/** The merchant transaction ids of the change log's rows, and the log's file. */
async function changeLog(): Promise<{ ids: string[]; file: number }> {
  const r = await sql<{ ids: string[] | null; file: number }>`select
      (select array_agg(k order by k) from recon_work.changed_keys c, unnest(c.merchant_transaction_ids) k) as ids,
      pg_relation_filenode('recon_work.changed_keys')::int as file`.execute(h.db);
  return { ids: r.rows[0]!.ids ?? [], file: r.rows[0]!.file };
}

describe('the change log after a run', () => {
  it('is truncated when every date’s last run saw all of it (its file swapped, not its rows deleted)', async () => {
    // A transaction that writes nothing here runs beside the writes and the run: the oldest running
    // transaction of the run's snapshot is older than M-Y's writer, which the snapshot saw all the same.
    await h.db.transaction().execute(async (other) => {
      await sql`select pg_current_xact_id()`.execute(other);
      await insertLedger(h.db, [{ merchant_transaction_id: 'M-Y', booked_at: '2026-03-03T16:00:00Z' }]);
      const before = await changeLog();
      expect(before.ids).toEqual(['M-T1', 'M-T1', 'M-T2', 'M-Y']);
      const run = await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', ...at });
      expect(run.scope).toBe('full');
      const after = await changeLog();
      expect(after.ids).toEqual([]);
      expect(after.file).not.toBe(before.file);
    });
  });

  it('keeps a change a kept date’s last run did not see, and drops it once every date has', async () => {
    await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', ...at });
    await insertLedger(h.db, [{ merchant_transaction_id: 'M-X', booked_at: '2026-03-02T16:00:00Z' }]);
    const before = await changeLog();
    // 03-03's first run saw M-X, 03-02's did not: the log is deleted from, not truncated.
    await reconcileRange(h.db, { from: '2026-03-03', to: '2026-03-03', ...at });
    expect(await changeLog()).toEqual({ ids: ['M-X'], file: before.file });
    expect((await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', ...at })).scope).toBe(
      'incremental',
    );
    expect((await changeLog()).ids).toEqual([]);
  });

  it('does not wait for a writer that holds the log, and keeps the keys it commits after the run', async () => {
    const before = await changeLog();
    await h.db.transaction().execute(async (writer) => {
      await insertLedger(writer, [{ merchant_transaction_id: 'M-W', booked_at: '2026-03-02T16:00:00Z' }]);
      const run = await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', ...at });
      expect(run.scope).toBe('full');
    });
    // Not truncated (the writer held the log): deleted from, and the writer's keys are there.
    const after = await changeLog();
    expect(after.file).toBe(before.file);
    expect(after.ids).toContain('M-W');
  });
});
