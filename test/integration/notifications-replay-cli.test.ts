import { describe, expect, it } from 'vitest';
import { quarantineNotification } from '../../ingest/notifications/store-notification.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { useTestDatabase } from '../support/database.ts';
import { notificationBody } from '../support/notification-body.ts';
import { recon } from '../support/recon-process.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

/**
 * A quarantined delivery from its discrepancy to its replay, as an operator meets it (issue 25 §5):
 * the worklist names the delivery and its reason (notification_quarantined), `recon notifications
 * replay` takes it in once its cause is gone, and the next run resolves the discrepancy; a delivery
 * still refused is named on stderr and its discrepancy stays open.
 */
const h = useTestDatabase();
const DAY = '2026-03-02';

async function open() {
  await reconcileRange(h.db, { from: DAY, to: DAY, now: '2026-03-03T17:00:00Z' });
  const rows = await h.db
    .selectFrom('discrepancies')
    .select(['discrepancy_key', 'actual'])
    .where('resolved_at', 'is', null)
    .where('kind', 'like', 'notification%')
    .orderBy('discrepancy_key')
    .execute();
  return rows;
}

describe('recon notifications replay', () => {
  it('takes in a delivery whose cause is gone, and the next run resolves its notification_quarantined', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [
      { transaction_id: 'T-GONE', notify_status: 'C' },
      { transaction_id: 'T-STILL', notify_status: 'C' },
    ]);
    await insertLedger(h.db, [
      { merchant_transaction_id: 'M-T-GONE', status: 'SUCCESSFUL' },
      { merchant_transaction_id: 'M-T-STILL', status: 'SUCCESSFUL' },
    ]);
    const body = (id: string, currencyCode = 'CAD') =>
      JSON.stringify(
        notificationBody(id, {
          merchant: { merchantTransactionId: `M-${id}` },
          transaction: { transactionAmount: 1000, transactionFee: 25, currencyCode },
        }),
      );
    const gone = await quarantineNotification(h.db, {
      kind: 'transaction',
      reason: 'the database refused the notification: 53300 too many connections',
      body: body('T-GONE'),
      receivedAt: '2026-03-02T15:00:07Z',
    });
    const still = await quarantineNotification(h.db, {
      kind: 'transaction',
      reason: 'transaction.currencyCode must be 3 uppercase letters (ISO 4217), got "cad"',
      body: body('T-STILL', 'cad'),
      receivedAt: '2026-03-02T15:00:08Z',
    });

    const before = await open();
    expect(before.map((r) => r.discrepancy_key)).toEqual([
      'notification_quarantined:T-GONE',
      'notification_quarantined:T-STILL',
    ]);
    expect(before[0]!.actual).toMatchObject({
      quarantine_id: gone,
      reason: 'the database refused the notification: 53300 too many connections',
    });

    const run = await recon(h.connectionString, ['notifications', 'replay']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ examined: 2, replayed: 1, alreadyHeld: 0 });
    expect(run.stderr).toBe(
      `recon: quarantined delivery ${still} is still refused: transaction.currencyCode must be 3 uppercase letters (ISO 4217), got "cad"\n`,
    );

    const after = await open();
    expect(after.map((r) => r.discrepancy_key)).toEqual(['notification_quarantined:T-STILL']);
    const resolved = await h.db
      .selectFrom('discrepancies')
      .select(['status'])
      .where('discrepancy_key', '=', 'notification_quarantined:T-GONE')
      .executeTakeFirstOrThrow();
    expect(resolved.status).toBe('resolved');

    // Again: nothing is taken twice.
    const again = await recon(h.connectionString, ['notifications', 'replay', '--id', String(gone)]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ examined: 0, replayed: 0 });
  });
});
