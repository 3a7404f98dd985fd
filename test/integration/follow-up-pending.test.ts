import { describe, expect, it } from 'vitest';
import { followUpNonFinal, type FollowUpRequest } from '../../ingest/follow-up/follow-up-non-final.ts';
import type { LookupStatus } from '../../ingest/follow-up/status-answer.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';

// The follow-up of non-final transactions (issue 25 §1): asked oldest first, at most the night's
// limit, each answer kept; a final answer written to the provider row as a load with row_history.

const h = useTestDatabase();

const request = (lookupStatus: LookupStatus, over: Partial<FollowUpRequest> = {}): FollowUpRequest => ({
  account: 'default',
  environment: 'staging',
  origin: 'workflow',
  lookupStatus,
  day: '2026-03-10',
  before: '2026-03-07',
  horizonDays: 120,
  limit: 10,
  now: '2026-03-11T06:00:00Z',
  ...over,
});

describe('followUpNonFinal', () => {
  it('settles a PENDING from a week ago as a load with row_history, keeps every answer without account tokens, and asks once a night', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    const pending = {
      status: 'PENDING',
      raw_status: 'PENDING',
      fee_cents: null,
      notify_status: 'I',
    } as const;
    await insertTransactions(h.db, load, [
      {
        transaction_id: 'P-WEEK',
        ...pending,
        transaction_on: '2026-03-03',
        transaction_at: '2026-03-03T15:00:00Z',
      },
      {
        transaction_id: 'P-STILL',
        ...pending,
        transaction_on: '2026-03-02',
        transaction_at: '2026-03-02T15:00:00Z',
      },
      {
        transaction_id: 'P-FAIL',
        ...pending,
        transaction_on: '2026-03-04',
        transaction_at: '2026-03-04T15:00:00Z',
      },
      // In the night's windows (re-pulled there), beyond the horizon, or final: not asked.
      {
        transaction_id: 'P-WINDOW',
        ...pending,
        transaction_on: '2026-03-08',
        transaction_at: '2026-03-08T15:00:00Z',
      },
      {
        transaction_id: 'P-OLD',
        ...pending,
        transaction_on: '2025-10-01',
        transaction_at: '2025-10-01T15:00:00Z',
      },
      { transaction_id: 'S-DONE', transaction_on: '2026-03-03', transaction_at: '2026-03-03T16:00:00Z' },
    ]);
    const asked: string[] = [];
    const lookupStatus: LookupStatus = async (id) => {
      asked.push(id);
      if (id === 'P-FAIL') throw new Error('transaction status of P-FAIL: the provider answered 500');
      return {
        transaction: {
          transactionId: id,
          transactionStatus: id === 'P-WEEK' ? 'SUCCESS' : 'PENDING',
          transactionFee: id === 'P-WEEK' ? 40 : undefined,
        },
        account: { accountMask: '****1234', obvToken: 'secret-token', bankName: 'Maple Bank' },
      };
    };
    const first = await followUpNonFinal(h.db, request(lookupStatus, { stuckThrough: '2026-03-03' }));
    expect(asked).toEqual(['P-STILL', 'P-WEEK', 'P-FAIL']);
    expect(first).toMatchObject({ nonFinal: 3, lookedUp: 3, failed: 1, settled: 1, stillPending: 1 });
    // The settled day, and the day of the one still pending past the stuck limit.
    expect(first.dates).toEqual(['2026-03-02', '2026-03-03']);

    const row = await h.db
      .selectFrom('provider_transactions')
      .select(['status', 'raw_status', 'fee_cents', 'load_id', 'source'])
      .where('transaction_id', '=', 'P-WEEK')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      status: 'SUCCESSFUL',
      raw_status: 'SUCCESS',
      fee_cents: 40,
      load_id: first.loadId,
      source: 'report-transactions',
    });
    const lineage = await h.db
      .selectFrom('loads')
      .selectAll()
      .where('load_id', '=', first.loadId!)
      .executeTakeFirstOrThrow();
    expect(lineage).toMatchObject({
      source: 'status-lookup',
      status: 'committed',
      rows_read: 2,
      rows_loaded: 2,
      rows_updated: 1,
      rows_rejected: 0,
    });
    const history = await h.db
      .selectFrom('row_history')
      .selectAll()
      .where('load_id', '=', first.loadId!)
      .execute();
    expect(
      history.map((r) => [r.row_key, r.changed_columns, (r.previous as { status: string }).status]),
    ).toEqual([['P-WEEK', ['status', 'raw_status', 'fee_cents'], 'PENDING']]);
    const lookups = await h.db.selectFrom('status_lookups').selectAll().orderBy('lookup_id').execute();
    expect(lookups.map((l) => [l.transaction_id, l.status, l.error])).toEqual([
      ['P-STILL', 'PENDING', null],
      ['P-WEEK', 'SUCCESSFUL', null],
      ['P-FAIL', null, 'Error: transaction status of P-FAIL: the provider answered 500'],
    ]);
    expect(JSON.stringify(lookups.map((l) => l.response))).not.toContain('secret-token');

    // The same night again asks nothing; the next night asks what is still not final.
    asked.length = 0;
    expect(
      await followUpNonFinal(h.db, request(lookupStatus, { now: '2026-03-11T09:00:00Z' })),
    ).toMatchObject({ lookedUp: 0, nonFinal: 2 });
    await followUpNonFinal(h.db, request(lookupStatus, { now: '2026-03-12T06:00:00Z', limit: 1 }));
    expect(asked).toEqual(['P-STILL']);
  });

  it("keeps an open stuck_pending's evidence current: each night's check, answered or failed, is what it shows", async () => {
    const account = 'stuck-acct';
    const load = await insertLoad(h.db, 'report-transactions', account);
    await insertTransactions(h.db, load, [
      {
        transaction_id: 'P-STUCK',
        account,
        status: 'PENDING',
        raw_status: 'PENDING',
        fee_cents: null,
        notify_status: 'I',
        transaction_on: '2026-03-02',
        transaction_at: '2026-03-02T15:00:00Z',
      },
    ]);
    // As the nightly workflow does: the follow-up, then the dates it names reconciled, at the night's instant.
    const night = async (now: string, lookupStatus: LookupStatus) => {
      const f = await followUpNonFinal(
        h.db,
        request(lookupStatus, { account, now, stuckThrough: '2026-03-03' }),
      );
      for (const date of f.dates) await reconcileRange(h.db, { account, from: date, to: date, now });
      return h.db
        .selectFrom('discrepancies')
        .select(['actual', 'resolved_at'])
        .where('account', '=', account)
        .where('kind', '=', 'stuck_pending')
        .executeTakeFirstOrThrow();
    };
    const pending: LookupStatus = async (id) => ({
      transaction: { transactionId: id, transactionStatus: 'PENDING' },
    });
    const first = await night('2026-03-11T06:00:00Z', pending);
    expect(first).toMatchObject({
      resolved_at: null,
      actual: { last_status_lookup: { looked_up_at: '2026-03-11T06:00:00+00:00', provider_said: 'PENDING' } },
    });
    // The next night the provider cannot answer: the evidence says so, with when it was asked.
    const failing: LookupStatus = async () => {
      throw new Error('transaction status of P-STUCK: the provider answered 503');
    };
    const second = await night('2026-03-12T06:00:00Z', failing);
    expect(second).toMatchObject({
      resolved_at: null,
      actual: {
        last_checked_at: '2026-03-12T06:00:00+00:00',
        last_status_lookup: {
          looked_up_at: '2026-03-12T06:00:00+00:00',
          provider_said: 'Error: transaction status of P-STUCK: the provider answered 503',
        },
      },
    });
    const third = await night('2026-03-13T06:00:00Z', pending);
    expect(third.actual).toMatchObject({
      last_checked_at: '2026-03-13T06:00:00+00:00',
      last_status_lookup: { looked_up_at: '2026-03-13T06:00:00+00:00', provider_said: 'PENDING' },
    });
  });
});
