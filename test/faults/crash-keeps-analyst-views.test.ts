import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { deriveMerchantView } from '../../sandbox/merchant-view.ts';
import { loadMerchantView, reconcileViewArgs } from '../support/load-merchant-view.ts';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';
import { analystSnapshot, query, recon } from '../support/recon-process.ts';

// Issue 15, section 3: after `recon reconcile`, a crash of PostgreSQL (pg_ctl stop -m immediate) and
// a start, every table and view analysts read gives what it gave before. With UNLOGGED match tables,
// notification_delivery showed no received deliveries and returns_with_originals lost its ledger links.

let server: FaultPostgres;
const view = deriveMerchantView({ seed: 1, transactions: 1500, from: '2026-03-01', to: '2026-03-12' });

beforeAll(async () => {
  server = await startFaultPostgres();
  const pool = createPool(server.url, 2);
  const db = createDatabase(pool);
  try {
    await loadMerchantView(db, view);
  } finally {
    await db.destroy();
  }
});
afterAll(async () => {
  await server?.close();
});

describe('a crash after a reconcile run', () => {
  it('leaves every table and view analysts read as it was', async () => {
    const run = await recon(server.url, reconcileViewArgs(view));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const received = await query<{ n: number }>(
      server.url,
      `select count(*)::int as n from notification_delivery where delivery_count > 0`,
    );
    const linked = await query<{ n: number }>(
      server.url,
      `select count(*)::int as n from returns_with_originals where ledger_merchant_transaction_id is not null`,
    );
    expect(received.rows[0]!.n).toBeGreaterThan(100);
    expect(linked.rows[0]!.n).toBeGreaterThan(5);
    const before = await analystSnapshot(server.url);
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        'notification_delivery',
        'returns_with_originals',
        'open_discrepancies',
        'daily_settlement_totals',
        'transaction_matches',
        'notification_matches',
      ]),
    );

    await server.crash();
    await server.start();

    const after = await analystSnapshot(server.url);
    expect(after).toEqual(before);
  });
});
