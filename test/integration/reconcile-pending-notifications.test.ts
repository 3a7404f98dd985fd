import { describe, expect, it } from 'vitest';
import { normaliseNotification } from '../../ingest/notifications/normalise-notification.ts';
import { replayQuarantine } from '../../ingest/notifications/replay-quarantine.ts';
import { quarantineNotification, storeNotification } from '../../ingest/notifications/store-notification.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// Issue 25 §1, §2 and §5: stuck_pending, notification histories that contradict themselves, final
// notifications for rows still PENDING, transactionNotifyStatus as the interface describes it, and
// quarantined deliveries named by the discrepancy, then replayed.

const h = useTestDatabase();

// Monday 2 March 2026: five business days later is Monday 9 March.
const DAY = '2026-03-02';

function body(transactionId: string, over: Record<string, unknown> = {}) {
  return {
    merchant: {
      merchantId: 'IBTMERCH0001',
      merchantTransactionId: `M-${transactionId}`,
      merchantUserId: 'user-1',
    },
    accountInfo: { accountLabel: '****1234', accountType: 'PC' },
    transaction: {
      transactionId,
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESS',
      transactionAmount: 1000,
      transactionFee: 25,
      currencyCode: 'CAD',
      ...over,
    },
  };
}

async function notify(transactionId: string, receivedAt: string, over: Record<string, unknown> = {}) {
  const n = normaliseNotification('transaction', body(transactionId, over));
  if (!n.ok) throw new Error(n.reason);
  await storeNotification(h.db, n.value, { receivedAt });
}

async function run(now: string) {
  await reconcileRange(h.db, { from: DAY, to: DAY, now });
  return h.db
    .selectFrom('discrepancies')
    .select(['discrepancy_key', 'kind', 'rule', 'expected', 'actual', 'expected_amount_cents', 'candidates'])
    .where('resolved_at', 'is', null)
    .where('kind', 'not in', ['missing_in_ledger', 'notification_late'])
    .orderBy('discrepancy_key')
    .execute();
}
const keys = (rows: { discrepancy_key: string }[]) => rows.map((r) => r.discrepancy_key);

describe('pending transactions and notification histories', () => {
  it('judges stuck_pending, contradictions, final notifications of PENDING rows and notify statuses', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-STUCK', status: 'PENDING', raw_status: 'PENDING', notify_status: 'I' },
      { transaction_id: 'T-CONTRA' },
      {
        transaction_id: 'T-AHEAD',
        status: 'PENDING',
        raw_status: 'PENDING',
        notify_status: 'I',
        fee_cents: null,
      },
      { transaction_id: 'T-SENT', notify_status: 'S' },
      { transaction_id: 'T-NOTSENT', notify_status: 'I' },
      { transaction_id: 'T-QUAR', notify_status: 'C' },
    ]);
    await insertLedger(
      h.db,
      ['T-STUCK', 'T-CONTRA', 'T-AHEAD', 'T-SENT', 'T-NOTSENT', 'T-QUAR'].map((t) => ({
        merchant_transaction_id: `M-${t}`,
        status: t === 'T-STUCK' || t === 'T-AHEAD' ? 'PENDING' : 'SUCCESSFUL',
      })),
    );
    // FAILED first, SUCCESS last: the latest body agrees with the report, the history does not.
    await notify('T-CONTRA', '2026-03-02T15:00:05Z', { transactionStatus: 'FAILED', transactionFee: 0 });
    await notify('T-CONTRA', '2026-03-02T15:00:09Z');
    await notify('T-AHEAD', '2026-03-02T15:00:05Z', { transactionStatus: 'FAILED', transactionFee: 0 });
    const quarantineId = await quarantineNotification(h.db, {
      kind: 'transaction',
      reason: 'the database refused the notification: 57014 canceling statement due to statement timeout',
      body: JSON.stringify(body('T-QUAR')),
      receivedAt: '2026-03-02T15:00:07Z',
    });
    await h.db
      .insertInto('status_lookups')
      .values({
        transaction_id: 'T-STUCK',
        status: 'PENDING',
        raw_status: 'PENDING',
        looked_up_at: '2026-03-06T08:00:00Z',
      })
      .execute();

    // Tuesday: within the grace period and the stuck limit.
    const early = await run('2026-03-03T17:00:00Z');
    expect(keys(early)).toEqual([
      'notification_contradiction:T-CONTRA',
      'notification_missing:T-SENT',
      'notification_quarantined:T-QUAR',
      'notification_undelivered:T-NOTSENT',
    ]);
    const byKey = new Map(early.map((r) => [r.discrepancy_key, r]));
    expect(byKey.get('notification_contradiction:T-CONTRA')).toMatchObject({
      rule: 'notification_history',
      expected_amount_cents: 1000,
      actual: { notifications: [{ status: 'FAILED' }, { status: 'SUCCESSFUL' }] },
    });
    expect(byKey.get('notification_missing:T-SENT')!.expected).toEqual({
      notify_status: 'S',
      notify_status_means: 'sent',
      status: 'SUCCESSFUL',
    });
    expect(byKey.get('notification_undelivered:T-NOTSENT')!.expected).toMatchObject({
      notify_status_means: 'not sent',
    });
    expect(byKey.get('notification_quarantined:T-QUAR')).toMatchObject({
      actual: {
        quarantine_id: quarantineId,
        reason: 'the database refused the notification: 57014 canceling statement due to statement timeout',
        deliveries: 1,
      },
      candidates: { notifications: [], quarantine: [quarantineId] },
    });

    // Friday: four business days; the grace period (2) has run out for the final notification.
    const friday = await run('2026-03-06T17:00:00Z');
    expect(keys(friday)).toContain('notification_mismatch:pending:T-AHEAD');
    expect(keys(friday).filter((k) => k.startsWith('stuck_pending'))).toEqual([]);
    expect(friday.find((r) => r.discrepancy_key === 'notification_mismatch:pending:T-AHEAD')).toMatchObject({
      rule: 'notification_vs_pending_report',
      expected: { status: 'PENDING' },
      actual: { status: 'FAILED' },
    });

    // The next Monday: five business days after the transaction date.
    const monday = await run('2026-03-09T17:00:00Z');
    expect(keys(monday).filter((k) => k.startsWith('stuck_pending'))).toEqual([
      'stuck_pending:T-AHEAD',
      'stuck_pending:T-STUCK',
    ]);
    const stuck = monday.find((r) => r.discrepancy_key === 'stuck_pending:T-STUCK')!;
    expect(stuck).toMatchObject({
      rule: 'pending_until_final',
      expected: { final_within_business_days: 5, transaction_on: DAY },
      actual: {
        status: 'PENDING',
        last_status_lookup: { looked_up_at: '2026-03-06T08:00:00+00:00', provider_said: 'PENDING' },
        last_load: { load_id: load, source: 'report-transactions' },
      },
      expected_amount_cents: 1000,
    });
  });

  it('replays a quarantined delivery once its cause is gone, once, and keeps one still refused', async () => {
    const good = await quarantineNotification(h.db, {
      kind: 'transaction',
      reason: 'the database refused the notification: 53300 too many connections',
      body: JSON.stringify(body('T-REPLAY')),
      receivedAt: '2026-03-02T15:00:07.123456Z',
    });
    const bad = await quarantineNotification(h.db, {
      kind: 'transaction',
      reason: 'transaction.currencyCode must be 3 uppercase letters (ISO 4217), got "cad"',
      body: JSON.stringify(body('T-BAD', { currencyCode: 'cad' })),
    });
    const first = await replayQuarantine(h.db, { ids: [good, bad] });
    expect(first).toMatchObject({ examined: 2, replayed: 1, alreadyHeld: 0 });
    expect(first.stillRefused).toEqual([
      {
        quarantineId: bad,
        reason: 'transaction.currencyCode must be 3 uppercase letters (ISO 4217), got "cad"',
      },
    ]);
    const row = await h.db
      .selectFrom('notification_quarantine')
      .select(['transaction_id', 'notification_id', 'replayed_at'])
      .where('quarantine_id', '=', good)
      .executeTakeFirstOrThrow();
    expect(row.transaction_id).toBe('T-REPLAY');
    expect(row.replayed_at).not.toBeNull();
    const stored = await h.db
      .selectFrom('notifications')
      .select(['transaction_id', 'delivery_count'])
      .select((eb) => eb.cast<string>('received_at', 'text').as('received_at'))
      .where('notification_id', '=', row.notification_id!)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({
      transaction_id: 'T-REPLAY',
      delivery_count: 1,
      received_at: '2026-03-02 15:00:07.123456+00',
    });

    const again = await replayQuarantine(h.db, { ids: [good, bad] });
    expect(again).toMatchObject({ examined: 1, replayed: 0, alreadyHeld: 0 });
    expect(
      await h.db
        .selectFrom('notifications')
        .select('notification_id')
        .where('transaction_id', '=', 'T-REPLAY')
        .execute(),
    ).toHaveLength(1);
  });
});
