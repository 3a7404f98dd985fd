import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database.ts';
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
});
