import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileAccounts } from '../../reconcile/reconcile-range.ts';
import { loadReportData } from '../../reconcile/report/report-data.ts';
import { deriveMerchantView, type MerchantView } from '../../sandbox/merchant-view.ts';
import { createTestDatabase } from '../support/database.ts';
import { loadMerchantView } from '../support/load-merchant-view.ts';

// Ground truth with three accounts in one warehouse. Two of them hold the same sandbox merchant, so
// every transaction id and merchant transaction id repeats across accounts on purpose: matching
// across accounts would see each id twice and report duplicates, or pair rows of the wrong account.

let h: DatabaseHandle;
const spring = { seed: 1, transactions: 3000, from: '2026-03-01', to: '2026-03-12' };
const ACCOUNTS = [
  { account: 'ca-main', view: deriveMerchantView(spring) },
  { account: 'us-main', view: deriveMerchantView(spring) },
  {
    account: 'eu-main',
    view: deriveMerchantView({ seed: 977, transactions: 400, from: '2026-12-20', to: '2027-01-03' }),
  },
];

beforeAll(async () => {
  h = await createTestDatabase();
  for (const [i, { account, view }] of ACCOUNTS.entries()) {
    await loadMerchantView(h.db, view, { account, feeSchedule: i === 0 });
  }
});
afterAll(async () => h?.close());

const ids = (v: MerchantView) => new Set(v.providerTransactions.map((t) => t.merchant_transaction_id));

describe('reconciliation of several accounts', () => {
  it('shares ids across accounts on purpose', () => {
    const [ca, us] = [ids(ACCOUNTS[0]!.view), ids(ACCOUNTS[1]!.view)];
    expect([...ca].filter((id) => us.has(id)).length).toBeGreaterThan(2500);
  });

  it('finds exactly each account\u2019s injected discrepancies under its account (precision and recall 1)', async () => {
    const summaries = [];
    for (const { account, view } of ACCOUNTS) {
      summaries.push(...(await reconcileAccounts(h.db, { ...view.range, now: view.asOf, account })));
    }
    for (const { account, view } of ACCOUNTS) {
      const rows = await h.db
        .selectFrom('discrepancies')
        .select(['discrepancy_key', 'kind', 'expected_amount_cents', 'actual_amount_cents'])
        .where('resolved_at', 'is', null)
        .where('account', '=', account)
        .orderBy('discrepancy_key')
        .execute();
      const actual = rows.map(
        (r) => `${r.discrepancy_key} ${r.kind} ${r.expected_amount_cents} ${r.actual_amount_cents}`,
      );
      const expected = view.expected
        .filter((e) => e.key !== undefined)
        .map((e) => `${e.key} ${e.kind} ${e.expectedAmountCents} ${e.actualAmountCents}`)
        .sort();
      expect(actual, account).toEqual(expected);
      const summary = summaries.find((s) => s.account === account)!;
      expect(summary.totalDiscrepancies, account).toBe(expected.length);
    }
    // No claim, event or total pairs or mixes two accounts.
    const crossed = await sql<{ n: number }>`select
      (select count(*) from transaction_matches m join provider_transactions p using (account, transaction_id)
        join merchant_ledger l on l.account = m.account and l.merchant_transaction_id = m.merchant_transaction_id)::int
      - (select count(*) from transaction_matches)::int as n`.execute(h.db);
    expect(crossed.rows[0]!.n).toBe(0);
    const events = await sql<{ n: number }>`select count(*)::int as n from discrepancy_events e
      join discrepancies d using (discrepancy_id) where e.account <> d.account`.execute(h.db);
    expect(events.rows[0]!.n).toBe(0);
    const totals = await sql<{ account: string; n: number }>`select account, sum(count)::int as n
      from discrepancy_totals where status = 'open' group by account order by account`.execute(h.db);
    const open = await sql<{ account: string; n: number }>`select account, count(*)::int as n
      from discrepancies where status = 'open' group by account order by account`.execute(h.db);
    expect(totals.rows).toEqual(open.rows);
  });

  it('a second run changes nothing', async () => {
    const again = [];
    for (const { account, view } of ACCOUNTS) {
      again.push(...(await reconcileAccounts(h.db, { ...view.range, now: view.asOf, account })));
    }
    for (const s of again) {
      expect([s.lifecycle.opened, s.lifecycle.reopened, s.lifecycle.changed, s.lifecycle.resolved]).toEqual([
        0, 0, 0, 0,
      ]);
    }
    const all = await reconcileAccounts(h.db, {
      from: '2026-03-05',
      to: '2026-03-05',
      now: ACCOUNTS[0]!.view.asOf,
    });
    expect(all.map((s) => s.account)).toEqual(['ca-main', 'eu-main', 'us-main']);
  });

  it('recon report --account reports one account; without it, every account', async () => {
    const { range } = ACCOUNTS[0]!.view;
    const one = await loadReportData(h.db, range, 'us-main');
    const every = await loadReportData(h.db, range);
    const open = (d: typeof one) => d.discrepancies.filter((r) => r.resolved_at === null).length;
    expect(open(one)).toBe(ACCOUNTS[1]!.view.expected.length);
    expect(open(every)).toBe(2 * ACCOUNTS[1]!.view.expected.length);
    expect(one.volumes.reduce((n, v) => n + v.count, 0) * 2).toBe(
      every.volumes.reduce((n, v) => n + v.count, 0),
    );
  });
});
