import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { followUpPendingTransactions } from '../../reconcile/follow-up-pending.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

describe('followUpPendingTransactions', () => {
  it('looks up transactions PENDING past the age, stores the answer without account tokens, and waits before asking again', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [
      {
        transaction_id: 'P-OLD',
        status: 'PENDING',
        raw_status: 'PENDING',
        transaction_at: '2026-03-01T10:00:00Z',
      },
      {
        transaction_id: 'P-FAIL',
        status: 'PENDING',
        raw_status: 'PENDING',
        transaction_at: '2026-03-01T11:00:00Z',
      },
      {
        transaction_id: 'P-NEW',
        status: 'PENDING',
        raw_status: 'PENDING',
        transaction_at: '2026-03-02T09:00:00Z',
      },
      { transaction_id: 'S-OLD', transaction_at: '2026-03-01T10:00:00Z' },
    ]);
    const asked: string[] = [];
    const lookupStatus = async (id: string) => {
      asked.push(id);
      if (id === 'P-FAIL') throw new Error('status lookup of P-FAIL answered 500');
      return {
        merchant: { merchantId: 'IBTMERCH0001' },
        transaction: {
          transactionId: id,
          transactionStatus: 'RETURNED_WITH_REPRESENTMENT',
          transactionFee: 40,
          returnCode: '901',
          nextActionDate: '2026-03-09',
        },
        account: { accountMask: '****1234', obvToken: 'secret-token', bankName: 'Maple Bank' },
      };
    };
    const now = '2026-03-02T12:00:00Z';
    const first = await followUpPendingTransactions(h.db, { lookupStatus, now, pendingForHours: 24 });
    expect(first).toEqual({ lookedUp: 2, failed: 1, settled: 1 });
    expect(asked).toEqual(['P-OLD', 'P-FAIL']);
    const rows = await h.db.selectFrom('status_lookups').selectAll().orderBy('lookup_id').execute();
    expect(
      rows.map((r) => [
        r.transaction_id,
        r.status,
        r.raw_status,
        r.fee_cents,
        r.return_code,
        r.next_action_date,
        r.error,
      ]),
    ).toEqual([
      ['P-OLD', 'RETURNED', 'RETURNED_WITH_REPRESENTMENT', 40, '901', '2026-03-09', null],
      ['P-FAIL', null, null, null, null, null, 'Error: status lookup of P-FAIL answered 500'],
    ]);
    expect(JSON.stringify(rows[0]!.response)).not.toContain('secret-token');
    expect(rows[0]!.response).toMatchObject({ account: { accountMask: '****1234' } });
    const again = await followUpPendingTransactions(h.db, { lookupStatus, now: '2026-03-02T13:00:00Z' });
    expect(again.lookedUp).toBe(0);
  });
});
