import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createTestDatabase } from '../support/database.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

/** Runs each query as recon_analyst on one connection; returns 'ok' or the error message. */
async function asAnalyst(queries: string[]): Promise<string[]> {
  return h.db.connection().execute(async (conn) => {
    const out: string[] = [];
    await sql`set role recon_analyst`.execute(conn);
    try {
      for (const q of queries) {
        try {
          await sql.raw(q).execute(conn);
          out.push('ok');
        } catch (error) {
          out.push((error as Error).message);
        }
      }
    } finally {
      await sql`reset role`.execute(conn);
    }
    return out;
  });
}

describe('recon_analyst role', () => {
  it('exists, cannot log in, and reads tables and views (personal data redacted or hashed)', async () => {
    const role = await sql<{
      rolcanlogin: boolean;
    }>`select rolcanlogin from pg_roles where rolname = 'recon_analyst'`.execute(h.db);
    expect(role.rows).toEqual([{ rolcanlogin: false }]);
    expect(
      await asAnalyst([
        'select transaction_id, amount_cents, fee_cents from provider_transactions',
        'select transaction_id, amount_cents, status, merchant_transaction_id from legacy_transactions',
        'select notification_id, transaction_id, amount_cents, received_at from notifications',
        'select * from merchant_ledger',
        'select * from discrepancies',
        'select * from daily_settlement_totals',
        'select * from open_discrepancies',
        'select * from returns_with_originals',
        'select * from notification_delivery',
        'select lookup_id, status from status_lookups',
        'select quarantine_id, reason from notification_quarantine',
        'select rejected_row_id, reason from rejected_rows',
        'select * from provider_transactions_redacted',
        'select * from provider_returns_redacted',
        'select * from provider_adjustments_redacted',
        'select * from legacy_transactions_redacted',
        'select * from notifications_redacted',
        'select * from notification_quarantine_redacted',
        'select * from rejected_rows_redacted',
        'select * from row_history_redacted',
        'select * from status_lookups_redacted',
      ]),
    ).toEqual(Array(21).fill('ok'));
  });

  it("cannot read consumers' personal data, nor write", async () => {
    expect(
      await asAnalyst([
        'select consumer_email from legacy_transactions',
        'select bank_account_masked from legacy_transactions',
        'select account_token from notifications',
        'select payload from notifications',
        'select body from notification_quarantine',
        'select raw from rejected_rows',
        'select response from status_lookups',
        'select * from legacy_transactions',
        'select raw from legacy_transactions',
        'select raw from provider_transactions',
        'select raw from provider_returns',
        'select raw from provider_adjustments',
        'select account_label from notifications',
        'select previous from row_history',
        'select * from recon_private.personal_data_key',
        "select redact_personal('x'), personal_hash('x', (select key from recon_private.personal_data_key))",
        "update discrepancies set note = 'x'",
        "insert into fee_schedule (product, transaction_type, currency, valid_from) values ('IBT','DEBIT','CAD','2026-01-01')",
      ]),
    ).toEqual([
      'permission denied for table legacy_transactions',
      'permission denied for table legacy_transactions',
      'permission denied for table notifications',
      'permission denied for table notifications',
      'permission denied for table notification_quarantine',
      'permission denied for table rejected_rows',
      'permission denied for table status_lookups',
      'permission denied for table legacy_transactions',
      'permission denied for table legacy_transactions',
      'permission denied for table provider_transactions',
      'permission denied for table provider_returns',
      'permission denied for table provider_adjustments',
      'permission denied for table notifications',
      'permission denied for table row_history',
      'permission denied for schema recon_private',
      'permission denied for schema recon_private',
      'permission denied for table discrepancies',
      'permission denied for table fee_schedule',
    ]);
  });
});
