import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { actOnDiscrepancy } from '../../reconcile/discrepancies/actions.ts';
import { DiscrepancyNotFound } from '../../reconcile/discrepancies/row.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import {
  insertLedger,
  insertLoad,
  insertReturns,
  insertTransactions,
  storeTestNotification,
} from '../support/recon-rows.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const NOW = '2026-03-20T12:00:00Z';

/** A SUCCESS notification of the transaction, as the receiver stores it; T-DUP1 and T-DUP2 share M-DUP. */
function notify(transactionId: string, over: Record<string, unknown> = {}, receivedAt?: string) {
  const merchantTransactionId = transactionId.startsWith('T-DUP') ? 'M-DUP' : `M-${transactionId}`;
  return storeTestNotification(h.db, transactionId, merchantTransactionId, over, receivedAt);
}

async function open() {
  const rows = await h.db
    .selectFrom('discrepancies')
    .select([
      'kind',
      'rule',
      'transaction_id',
      'merchant_transaction_id',
      'return_transaction_id',
      'expected_amount_cents',
      'actual_amount_cents',
      'status',
    ])
    .where('resolved_at', 'is', null)
    .orderBy('discrepancy_key')
    .execute();
  return rows;
}

describe('reconcileRange', () => {
  it('finds every kind of discrepancy once, with amounts, and nothing on agreeing rows', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    const ok = ['T-OK1'];
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-OK1' },
      { transaction_id: 'T-OK2', transaction_type: 'CREDIT', amount_cents: 5000 },
      { transaction_id: 'T-MIL' }, // missing_in_ledger
      { transaction_id: 'T-REJ', status: 'REJECTED', raw_status: 'REJECTED', fee_cents: 0 }, // rejected, not booked: fine
      { transaction_id: 'T-AMT', amount_cents: 2000 }, // ledger says 1000
      { transaction_id: 'T-CUR', currency: 'USD' },
      { transaction_id: 'T-TYP', transaction_type: 'CREDIT' },
      { transaction_id: 'T-STA', status: 'REJECTED', raw_status: 'REJECTED' }, // ledger SUCCESSFUL
      { transaction_id: 'T-DUP1', merchant_transaction_id: 'M-DUP' },
      { transaction_id: 'T-DUP2', merchant_transaction_id: 'M-DUP', transaction_at: '2026-03-02T16:00:00Z' },
      { transaction_id: 'T-NMISS' }, // notify C, nothing received
      { transaction_id: 'T-NUND', notify_status: 'I' },
      { transaction_id: 'T-NLATE' },
      { transaction_id: 'T-NMIS' },
      { transaction_id: 'T-FEEN' },
      { transaction_id: 'T-SRC' },
    ]);
    await insertLedger(
      h.db,
      [
        ...ok.map((t) => ({ merchant_transaction_id: `M-${t}` })),
        { merchant_transaction_id: 'M-T-OK2', transaction_type: 'CREDIT', amount_cents: 5000 },
        { merchant_transaction_id: 'M-T-AMT' },
        { merchant_transaction_id: 'M-T-CUR' },
        { merchant_transaction_id: 'M-T-TYP' },
        { merchant_transaction_id: 'M-T-STA' },
        { merchant_transaction_id: 'M-DUP' },
        { merchant_transaction_id: 'M-T-NMISS' },
        { merchant_transaction_id: 'M-T-NUND' },
        { merchant_transaction_id: 'M-T-NLATE' },
        { merchant_transaction_id: 'M-T-NMIS' },
        { merchant_transaction_id: 'M-T-FEEN' },
        { merchant_transaction_id: 'M-T-SRC' },
        { merchant_transaction_id: 'M-ONLY-LEDGER', amount_cents: 777 }, // missing_at_provider
        {
          merchant_transaction_id: 'M-RET-OK',
          transaction_type: 'RETURN',
          transaction_id: 'R-OK',
          original_merchant_transaction_id: 'M-T-OK1',
          booked_at: '2026-03-04T15:00:00Z',
        },
      ].filter(
        (r, i, all) => all.findIndex((x) => x.merchant_transaction_id === r.merchant_transaction_id) === i,
      ),
    );
    const overrides: Record<string, Record<string, unknown>> = {
      'T-OK1': {},
      'T-OK2': { transactionType: 'CREDIT', transactionAmount: 5000 },
      'T-AMT': { transactionAmount: 2000 },
      'T-CUR': { currencyCode: 'USD' },
      'T-TYP': { transactionType: 'CREDIT' },
      'T-STA': { transactionStatus: 'REJECTED' },
      'T-DUP1': {},
      'T-DUP2': {},
      'T-SRC': {},
    };
    for (const [t, over] of Object.entries(overrides)) await notify(t, over);
    await notify('T-NLATE', {}, '2026-03-02T17:00:00Z');
    await notify('T-NMIS', { transactionAmount: 1001 });
    await notify('T-FEEN', { transactionFee: 30 });
    await notify('T-REJ', { transactionStatus: 'REJECTED', transactionFee: 0 });
    const rload = await insertLoad(h.db, 'report-returns');
    await insertReturns(h.db, rload, [
      { return_transaction_id: 'R-OK', original_transaction_id: 'T-OK1', merchant_transaction_id: 'M-T-OK1' },
      {
        return_transaction_id: 'R-NB',
        original_transaction_id: 'T-OK2',
        merchant_transaction_id: 'M-T-OK2',
        amount_cents: 5000,
      },
    ]);
    const lload = await insertLoad(h.db, 'legacy-transactions');
    await h.db
      .insertInto('legacy_transactions')
      .values({
        transaction_id: 'T-SRC',
        transaction_on: '2026-03-02',
        raw_transaction_type: 'D',
        merchant_transaction_id: 'M-T-SRC',
        amount_cents: 1100,
        currency: 'CAD',
        status: 'SUCCESSFUL',
        raw_status: 'S',
        query_type: '5',
        load_id: lload,
        first_load_id: lload,
        raw: 'x',
        consumer_email: 'a@example.com',
      })
      .execute();
    await h.db
      .insertInto('fee_schedule')
      .values({
        product: 'IBT',
        transaction_type: 'CREDIT',
        currency: 'CAD',
        fixed_cents: 20,
        basis_points: 15,
        valid_from: '2026-01-01',
      })
      .execute();

    const summary = await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-04', now: NOW });
    const found = (await open()).map((d) => [
      d.kind,
      d.rule,
      d.transaction_id ?? d.merchant_transaction_id,
      d.expected_amount_cents,
      d.actual_amount_cents,
    ]);
    expect(found).toEqual([
      ['amount_mismatch', 'transaction_vs_ledger', 'T-AMT', 2000, 1000],
      ['currency_mismatch', 'transaction_vs_ledger', 'T-CUR', 1000, 1000],
      ['duplicate_merchant_transaction', 'merchant_transaction_id_unique', 'T-DUP2', null, 1000],
      // T-OK2: CREDIT 5000 with fee 25; the schedule says 20 + round(5000 * 15 / 10000) = 28.
      ['fee_mismatch', 'fee_vs_notification', 'T-FEEN', 25, 30],
      ['fee_mismatch', 'fee_vs_schedule', 'T-OK2', 28, 25],
      ['fee_mismatch', 'fee_vs_schedule', 'T-TYP', 22, 25],
      ['missing_at_provider', 'ledger_vs_provider', 'M-ONLY-LEDGER', 777, null],
      ['missing_in_ledger', 'transaction_vs_ledger', 'T-MIL', 1000, null],
      ['notification_late', 'notification_delay', 'T-NLATE', null, null],
      ['notification_mismatch', 'notification_vs_report', 'T-NMIS', 1000, 1001],
      ['notification_missing', 'report_notify_status', 'T-MIL', null, null],
      ['notification_missing', 'report_notify_status', 'T-NMISS', null, null],
      ['notification_undelivered', 'report_notify_status', 'T-NUND', null, null],
      ['return_not_booked', 'return_vs_ledger', 'T-OK2', 5000, null],
      ['source_conflict', 'report_vs_legacy', 'T-SRC', 1000, 1100],
      ['status_mismatch', 'transaction_vs_ledger', 'T-STA', 1000, 1000],
      ['type_mismatch', 'transaction_vs_ledger', 'T-TYP', 1000, 1000],
    ]);
    expect(summary.totalDiscrepancies).toBe(17);
    expect(summary.lifecycle).toEqual({ opened: 17, reopened: 0, changed: 0, resolved: 0, unchanged: 0 });
    expect(summary.matched.returns).toBe(1);

    // Re-run in full: nothing changes but last_seen_at. (A run over changed keys would look at none
    // of them: reconcile-reuse.test.ts.)
    const again = await reconcileRange(h.db, {
      from: '2026-03-02',
      to: '2026-03-04',
      now: '2026-03-21T12:00:00Z',
      full: true,
    });
    expect(again.lifecycle).toEqual({ opened: 0, reopened: 0, changed: 0, resolved: 0, unchanged: 17 });

    // Fixing the ledger resolves; breaking it again reopens, and the note survives.
    const amt = await h.db
      .selectFrom('discrepancies')
      .select('discrepancy_id')
      .where('discrepancy_key', '=', 'amount_mismatch:T-AMT')
      .executeTakeFirstOrThrow();
    await h.db
      .updateTable('discrepancies')
      .set({ status: 'acknowledged', note: 'asked finance', acknowledged_by: 'ana', acknowledged_at: NOW })
      .where('discrepancy_id', '=', amt.discrepancy_id)
      .execute();
    await h.db
      .updateTable('merchant_ledger')
      .set({ amount_cents: 2000 })
      .where('merchant_transaction_id', '=', 'M-T-AMT')
      .execute();
    const fixed = await reconcileRange(h.db, {
      from: '2026-03-02',
      to: '2026-03-04',
      now: '2026-03-22T12:00:00Z',
    });
    expect(fixed.lifecycle.resolved).toBe(1);
    await h.db
      .updateTable('merchant_ledger')
      .set({ amount_cents: 1500 })
      .where('merchant_transaction_id', '=', 'M-T-AMT')
      .execute();
    const broken = await reconcileRange(h.db, {
      from: '2026-03-02',
      to: '2026-03-04',
      now: '2026-03-23T12:00:00Z',
    });
    expect(broken.lifecycle.reopened).toBe(1);
    const row = await h.db
      .selectFrom('discrepancies')
      .selectAll()
      .where('discrepancy_id', '=', amt.discrepancy_id)
      .executeTakeFirstOrThrow();
    expect([row.status, row.note, row.actual_amount_cents, row.first_seen_at, row.resolved_at]).toEqual([
      'open',
      'asked finance',
      1500,
      '2026-03-20 12:00:00+00',
      null,
    ]);
    const events = await h.db
      .selectFrom('discrepancy_events')
      .select('event')
      .where('discrepancy_id', '=', amt.discrepancy_id)
      .orderBy('event_id')
      .execute();
    expect(events.map((e) => e.event)).toEqual(['opened', 'resolved', 'reopened']);
  });

  it('gives the provider its grace period in business days before missing_at_provider', async () => {
    // Booked Thursday 2026-04-02; Good Friday 04-03 and the weekend do not count; grace 2 => due Tuesday 04-07.
    await insertLedger(h.db, [{ merchant_transaction_id: 'M-GRACE', booked_at: '2026-04-02T16:00:00Z' }]);
    const early = await reconcileRange(h.db, {
      from: '2026-04-02',
      to: '2026-04-02',
      now: '2026-04-06T20:00:00Z',
    });
    expect(early.discrepancies).toEqual([]);
    const due = await reconcileRange(h.db, {
      from: '2026-04-02',
      to: '2026-04-02',
      now: '2026-04-07T14:00:00Z',
    });
    expect(due.discrepancies).toEqual([
      { kind: 'missing_at_provider', currency: 'CAD', count: 1, amount_cents: 1000 },
    ]);
  });

  it('lets concurrent overlapping runs finish with one consistent result', async () => {
    const runs = await Promise.all([
      reconcileRange(h.db, { from: '2026-03-01', to: '2026-03-05', now: '2026-03-24T12:00:00Z' }),
      reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', now: '2026-03-24T12:00:00Z' }),
    ]);
    expect(runs.map((r) => r.totalDiscrepancies)).toEqual([17, 16]);
    const dupKeys = await sql<{
      n: number;
    }>`select count(*)::int as n from discrepancies group by discrepancy_key having count(*) > 1`.execute(
      h.db,
    );
    expect(dupKeys.rows).toEqual([]);
  });

  it('acknowledges with a note that survives a re-run, and refuses an unknown id', async () => {
    const d = await h.db
      .selectFrom('discrepancies')
      .select('discrepancy_id')
      .where('discrepancy_key', '=', 'missing_in_ledger:T-MIL')
      .executeTakeFirstOrThrow();
    await actOnDiscrepancy(
      h.db,
      d.discrepancy_id,
      { action: 'ack', note: 'booking tomorrow' },
      { name: 'ana', at: '2026-03-25T09:00:00Z' },
    );
    const seenBefore = (
      await h.db
        .selectFrom('discrepancies')
        .select('last_seen_at')
        .where('discrepancy_id', '=', d.discrepancy_id)
        .executeTakeFirstOrThrow()
    ).last_seen_at;
    const survives = async (full: boolean) => {
      await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-04', now: '2026-03-26T12:00:00Z', full });
      const row = await h.db
        .selectFrom('discrepancies')
        .selectAll()
        .where('discrepancy_id', '=', d.discrepancy_id)
        .executeTakeFirstOrThrow();
      return [row.status, row.note, row.acknowledged_by, row.acknowledged_at, row.last_seen_at];
    };
    // An acknowledgement changes nothing matching reads: a run over changed keys does not look at the
    // discrepancy (last_seen_at stays), a full run finds it again.
    const kept = ['acknowledged', 'booking tomorrow', 'ana', '2026-03-25 09:00:00+00'];
    expect(await survives(false)).toEqual([...kept, seenBefore]);
    expect(await survives(true)).toEqual([...kept, '2026-03-26 12:00:00+00']);
    const events = await h.db
      .selectFrom('discrepancy_events')
      .select(['event', 'details'])
      .where('discrepancy_id', '=', d.discrepancy_id)
      .orderBy('event_id')
      .execute();
    expect(events.map((e) => e.event)).toEqual(['opened', 'acknowledged']);
    expect(events[1]!.details).toEqual({ by: 'ana', note: 'booking tomorrow' });
    await expect(
      actOnDiscrepancy(h.db, 999_999, { action: 'ack', note: 'x' }, { name: 'y' }),
    ).rejects.toThrow(DiscrepancyNotFound);
  });
});

describe('reconcileRange dates', () => {
  it('refuses a date that does not exist, before touching the warehouse', async () => {
    const cases: [string, string][] = [
      ['2026-02-30', '2026-03-02'],
      ['2026-02-01', '2026-02-30'],
      ['20260201', '2026-02-03'],
    ];
    for (const [from, to] of cases) {
      await expect(reconcileRange(h.db, { from, to })).rejects.toThrow(
        `reconcile range ${from}..${to}: give two YYYY-MM-DD dates, from <= to`,
      );
    }
    const runs = await h.db
      .selectFrom('reconcile_runs')
      .select('run_id')
      .where('range_from', '=', '2026-02-01')
      .execute();
    expect(runs).toEqual([]);
  });
});

describe('reconcileRange, a row that moves to another date', () => {
  it('moves its discrepancies and their totals to the new date, over changed keys as in full', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    // No ledger entry: missing_in_ledger, whose expected and actual do not name the date.
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-MOVE', transaction_on: '2026-04-07', transaction_at: '2026-04-07T15:00:00Z' },
    ]);
    const range = { from: '2026-04-06', to: '2026-04-10' };
    const dates = async () => {
      const rows = await sql<{ business_date: string; totals: number }>`
        select d.business_date::text, (select coalesce(sum(t.count), 0)::int from discrepancy_totals t
          where t.business_date = d.business_date and t.kind = d.kind and t.status = d.status) as totals
        from discrepancies d where d.discrepancy_key = 'missing_in_ledger:T-MOVE'`.execute(h.db);
      return rows.rows;
    };
    await reconcileRange(h.db, { ...range, now: '2026-04-20T12:00:00Z' });
    expect(await dates()).toEqual([{ business_date: '2026-04-07', totals: 1 }]);
    await sql`update provider_transactions set transaction_on = '2026-04-08', transaction_at = '2026-04-08T15:00:00Z'
      where transaction_id = 'T-MOVE'`.execute(h.db);
    const over = await reconcileRange(h.db, { ...range, now: '2026-04-21T12:00:00Z' });
    expect(over.scope).toBe('incremental');
    // Counted on 2026-04-07 still, the day's roll-forward of a later run over changed keys did
    // not find it among the discrepancies it reads by date (seed 11 of reconcile-incremental).
    expect(await dates()).toEqual([{ business_date: '2026-04-08', totals: 1 }]);
    await reconcileRange(h.db, { ...range, now: '2026-04-22T12:00:00Z', full: true });
    expect(await dates()).toEqual([{ business_date: '2026-04-08', totals: 1 }]);
  });
});
