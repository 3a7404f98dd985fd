import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { parseFilter } from '../../reconcile/discrepancies/filter.ts';
import { worklistTotals } from '../../reconcile/discrepancies/read.ts';
import { useTestDatabase } from '../support/database.ts';

/**
 * An analyst's morning worklist (`open_discrepancies`) adds up to the workbench's totals: the same
 * items, and the same money at stake per kind and currency; and it shows who each item is assigned
 * to (migration 0019).
 */
const h = useTestDatabase(2);

async function asAnalyst<T extends object>(query: string): Promise<T[]> {
  return h.db.connection().execute(async (conn) => {
    await sql`set role recon_analyst`.execute(conn);
    try {
      return (await sql.raw<T>(query).execute(conn)).rows;
    } finally {
      await sql`reset role`.execute(conn);
    }
  });
}

describe('open_discrepancies, the analysts worklist', () => {
  it('has the money at stake, assignee and resolution, and its totals are the workbench totals', async () => {
    // Kinds whose stake is the difference, the whole amount, or the amount alone; two currencies;
    // one acknowledged and assigned; one resolved by a person (not in either worklist).
    await sql`insert into discrepancies (discrepancy_key, kind, rule, transaction_id, business_date, currency,
        expected_amount_cents, actual_amount_cents, difference_cents, status, assignee, account)
      values
        ('k1', 'amount_mismatch', 'transaction_vs_ledger', 'T1', '2026-04-01', 'CAD', 10000, 9000, 1000, 'open', null, 'ca-main'),
        ('k2', 'amount_mismatch', 'transaction_vs_ledger', 'T2', '2026-04-02', 'CAD', 5000, 7500, -2500, 'acknowledged', 'alice', 'ca-main'),
        ('k3', 'currency_mismatch', 'transaction_vs_ledger', 'T3', '2026-04-02', 'USD', 4200, 4200, 0, 'open', null, 'us-main'),
        ('k4', 'missing_in_ledger', 'transaction_vs_ledger', 'T4', '2026-04-03', 'USD', 1999, null, null, 'open', null, 'us-main'),
        ('k5', 'missing_in_ledger', 'transaction_vs_ledger', 'T5', '2026-04-03', 'USD', 777, null, null, 'open', null, 'us-main')`.execute(
      h.db,
    );
    await sql`update discrepancies set status = 'resolved', resolved_at = now(), resolution = 'accepted', resolved_by = 'alice'
      where discrepancy_key = 'k5'`.execute(h.db);

    const rows = await asAnalyst<{
      transaction_id: string;
      stake_cents: number;
      assignee: string | null;
      resolution: string | null;
    }>(
      'select transaction_id, stake_cents, assignee, resolution from open_discrepancies order by transaction_id',
    );
    expect(rows).toEqual([
      { transaction_id: 'T1', stake_cents: 1000, assignee: null, resolution: null },
      { transaction_id: 'T2', stake_cents: 2500, assignee: 'alice', resolution: null },
      { transaction_id: 'T3', stake_cents: 4200, assignee: null, resolution: null },
      { transaction_id: 'T4', stake_cents: 1999, assignee: null, resolution: null },
    ]);

    const analyst = await asAnalyst<{
      account: string;
      kind: string;
      currency: string;
      count: string;
      cents: string;
    }>(
      `select account, kind, currency, count(*)::bigint as count, sum(stake_cents)::bigint as cents
       from open_discrepancies group by account, kind, currency order by account, kind, currency`,
    );
    const workbench = (await worklistTotals(h.db, parseFilter({})))
      .map((t) => ({
        account: t.account,
        kind: t.kind,
        currency: t.currency,
        count: Number(t.count),
        cents: Number(t.cents),
      }))
      .sort((a, b) =>
        `${a.account} ${a.kind} ${a.currency}`.localeCompare(`${b.account} ${b.kind} ${b.currency}`),
      );
    expect(analyst).toEqual(workbench);
    expect(analyst).toHaveLength(3);
  });
});
