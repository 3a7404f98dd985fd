import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { loadReportData } from '../../reconcile/report/report-data.ts';
import { discrepanciesCsv } from '../../reconcile/report/write-csv.ts';
import { createToken } from '../../workbench/auth/accounts.ts';
import { buildWorkbench } from '../../workbench/server.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

/** The workbench's CSV export and `recon report --csv` are one definition: same columns, same rows. */

let h: DatabaseHandle;
let workbenchCsv: string;
let reportCsv: string;

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-AMT', amount_cents: 123_456, notify_status: null },
    { transaction_id: 'T-USD', amount_cents: 5, currency: 'USD', notify_status: null },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-AMT', transaction_id: 'T-AMT', amount_cents: 120_000 },
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
  const { token } = await createToken(h.db, { name: 'sheet', role: 'viewer' });
  const app = await buildWorkbench({ db: h.db });
  const res = await app.inject({
    method: 'GET',
    url: '/api/discrepancies.csv',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.statusCode).toBe(200);
  workbenchCsv = res.body;
  await app.close();
  reportCsv = discrepanciesCsv(
    (await loadReportData(h.db, { from: '2026-03-02', to: '2026-03-02' })).discrepancies,
  );
});

afterAll(async () => {
  await h?.close();
});

const records = (csv: string) => parse(csv, { columns: true }) as Record<string, string>[];
const byId = (rows: Record<string, string>[]) =>
  [...rows].sort((a, b) => Number(a.discrepancy_id) - Number(b.discrepancy_id));

describe('one CSV of discrepancies', () => {
  it('has the same columns, under the same names, in the workbench and the report', () => {
    const header = (csv: string) => csv.split('\r\n')[0];
    expect(header(workbenchCsv)).toBe(header(reportCsv));
    expect(header(workbenchCsv)).toBe(
      'discrepancy_id,kind,rule,status,business_date,currency,expected_amount,actual_amount,difference,at_stake,transaction_id,merchant_transaction_id,return_transaction_id,assignee,first_seen_at,acknowledged_by,note,resolved_at,resolution,expected_amount_cents,actual_amount_cents,difference_cents,stake_cents,expected,actual,account',
    );
  });

  it('writes the same rows, amounts in decimal beside their currency and in cents', () => {
    const fromWorkbench = byId(records(workbenchCsv));
    expect(fromWorkbench).toEqual(byId(records(reportCsv)));
    // By transaction id: the order in which a run inserts its discrepancies (and so their ids) is not
    // part of the CSV's contract.
    const byTransaction = [...fromWorkbench].sort((a, b) =>
      a.transaction_id!.localeCompare(b.transaction_id!),
    );
    const amounts = byTransaction.map((r) => [
      r.transaction_id,
      r.kind,
      r.currency,
      r.expected_amount,
      r.actual_amount,
      r.at_stake,
      r.expected_amount_cents,
      r.actual_amount_cents,
      r.stake_cents,
    ]);
    expect(amounts).toEqual([
      ['T-AMT', 'amount_mismatch', 'CAD', '1234.56', '1200.00', '34.56', '123456', '120000', '3456'],
      ['T-USD', 'missing_in_ledger', 'USD', '0.05', '', '0.05', '5', '', '5'],
    ]);
  });
});
