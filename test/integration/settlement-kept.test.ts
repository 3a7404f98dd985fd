import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange, type ReconcileRequest } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { keptAgainstView } from '../support/incremental-writes.ts';
import { emptyReconRows, insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// The settlement roll-forward's kept days (reconcile/rules/settlement-kept.ts, migration 0041): a run
// over changed keys reads its days' items from the kept table, the touched keys' items replaced,
// instead of through settlement_items, and reads a day from the view again whenever it cannot prove the kept day current:
// after a crash (UNLOGGED: the cache is empty), when the day was kept by another run than the one that
// last matched the date, or read with another definition of the view. Each test spoils a kept item
// of a day: a run that reads them finds a difference nothing explains, a run that reads the view none.
// (reconcile-incremental.test.ts checks the kept items against the view after every run.)

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const RANGE: ReconcileRequest = { from: '2026-03-01', to: '2026-03-05', now: '2026-04-20T12:00:00Z' };
const DAY = '2026-03-03';

beforeEach(async () => {
  await emptyReconRows(h.db);
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-1', notify_status: null },
    { transaction_id: 'T-2', transaction_on: DAY, notify_status: null },
    { transaction_id: 'T-3', transaction_on: DAY, notify_status: null },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-1' },
    { merchant_transaction_id: 'M-T-2', booked_at: `${DAY}T15:00:01Z` },
    { merchant_transaction_id: 'M-T-3', booked_at: `${DAY}T15:00:01Z` },
  ]);
});

/** The open settlement_unexplained discrepancies: key and the cents nothing explains. */
async function unexplained(): Promise<{ key: string; cents: number }[]> {
  const r = await sql<{
    key: string;
    cents: number;
  }>`select discrepancy_key as key, difference_cents::int as cents
    from discrepancies where kind = 'settlement_unexplained' and resolved_at is null order by 1`.execute(
    h.db,
  );
  return r.rows;
}

/** A write to the day's ledger entry (its key is noted, nothing changes) and a run: over the changed keys. */
async function changeTheDayAndRun(): Promise<void> {
  await sql`update merchant_ledger set amount_cents = amount_cents where merchant_transaction_id = 'M-T-2'`.execute(
    h.db,
  );
  const run = await reconcileRange(h.db, RANGE);
  expect(run.scope).toBe('incremental');
}

/**
 * Spoils the kept item of the day's other transaction, which the change does not touch, by 100 cents,
 * and its day's kept sums (migration 0050) with it (what a wrong cache would give).
 */
async function spoilTheDay(): Promise<void> {
  await sql`update recon_work.settlement_kept_items set net_cents = net_cents + 100
    where item_key = 'T:T-3'`.execute(h.db);
  await sql`update recon_work.settlement_kept_sums set provider_net = provider_net + 100
    where business_date = ${DAY}`.execute(h.db);
}

const SPOILED = [{ key: `settlement_unexplained:${DAY}:CAD`, cents: 100 }];

describe("the settlement roll-forward's kept days", () => {
  it('are kept by a full run, and a run over changed keys reads its days from them', async () => {
    expect((await reconcileRange(h.db, RANGE)).scope).toBe('full');
    const kept = await sql<{
      n: number;
    }>`select count(*)::int as n from recon_work.settlement_kept_days`.execute(h.db);
    expect(kept.rows[0]!.n).toBe(5);
    await spoilTheDay();
    await changeTheDayAndRun();
    expect(await unexplained()).toEqual(SPOILED);
  });

  it('are read from the view again after a crash emptied them, and kept again', async () => {
    await reconcileRange(h.db, RANGE);
    await sql`truncate recon_work.settlement_kept_items, recon_work.settlement_kept_days, recon_work.settlement_kept_sums`.execute(
      h.db,
    );
    await changeTheDayAndRun();
    expect(await unexplained()).toEqual([]);
    // The day read again is kept: the next run reads it from there.
    await spoilTheDay();
    await changeTheDayAndRun();
    expect(await unexplained()).toEqual(SPOILED);
  });

  it('are read from the view when another run than the last to match the date kept them', async () => {
    await reconcileRange(h.db, RANGE);
    await spoilTheDay();
    await sql`update recon_work.settlement_kept_days set run_id = run_id - 1 where business_date = ${DAY}`.execute(
      h.db,
    );
    await changeTheDayAndRun();
    expect(await unexplained()).toEqual([]);
  });

  it('are read from the view when settlement_items was defined otherwise', async () => {
    await reconcileRange(h.db, RANGE);
    await spoilTheDay();
    await sql`update recon_work.settlement_kept_days set view_digest = 'another definition'`.execute(h.db);
    await changeTheDayAndRun();
    expect(await unexplained()).toEqual([]);
  });

  it('hold an adjustment without a transaction id written since: every run looks at those', async () => {
    await reconcileRange(h.db, RANGE);
    // Its insert notes no key and no date (migrations 0027, 0035): the run finds it among the range's
    // adjustments without a transaction id (scope_adj), and its item must be kept with the day's.
    const load = await insertLoad(h.db, 'legacy-adjustments');
    await h.db
      .insertInto('provider_adjustments')
      .values({
        adjustment_key: 'A-1#1',
        transaction_id: null,
        adjustment_type: 'A',
        amount_cents: -300,
        fee_cents: 0,
        currency: 'CAD',
        adjusted_on: DAY,
        source: 'legacy-adjustments',
        load_id: load,
        first_load_id: load,
        raw: '',
      })
      .execute();
    expect((await reconcileRange(h.db, RANGE)).scope).toBe('incremental');
    expect((await keptAgainstView(h.db, RANGE.from, RANGE.to)).wrong).toEqual([]);
    // The ledger books it: the day balances, as a full run finds it.
    await insertLedger(h.db, [
      {
        merchant_transaction_id: 'MA-1',
        transaction_type: 'ADJUSTMENT',
        amount_cents: -300,
        booked_at: `${DAY}T17:00:00Z`,
      },
    ]);
    expect((await reconcileRange(h.db, RANGE)).scope).toBe('incremental');
    expect(await unexplained()).toEqual([]);
    await reconcileRange(h.db, { ...RANGE, full: true });
    expect(await unexplained()).toEqual([]);
  });
});
