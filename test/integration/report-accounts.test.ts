import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileAccounts } from '../../reconcile/reconcile-range.ts';
import { formatReport, reportJson } from '../../reconcile/report/format-summary.ts';
import { loadReportData, type ReportData } from '../../reconcile/report/report-data.ts';
import { renderHtmlReport } from '../../reconcile/report/render-html.ts';
import { discrepanciesCsv } from '../../reconcile/report/write-csv.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';

// Issue 12: a report over several provider accounts shows its open totals per account and currency.
// ca-main has two unbooked CAD transactions, us-main one unbooked USD and one unbooked CAD.

const NOW = '2026-03-20T12:00:00Z';
const RANGE = { from: '2026-03-02', to: '2026-03-02' };

let h: DatabaseHandle;
let data: ReportData;
beforeAll(async () => {
  h = await createTestDatabase();
  const quiet = { notify_status: null }; // no notification expected: only ledger findings
  const ca = await insertLoad(h.db, 'report-transactions', 'ca-main');
  await insertTransactions(h.db, ca, [
    { transaction_id: 'T-CA-1', account: 'ca-main', amount_cents: 100_000, ...quiet },
    { transaction_id: 'T-CA-2', account: 'ca-main', amount_cents: 2_345, ...quiet },
  ]);
  const us = await insertLoad(h.db, 'report-transactions', 'us-main');
  await insertTransactions(h.db, us, [
    { transaction_id: 'T-US-1', account: 'us-main', amount_cents: 77_700, currency: 'USD', ...quiet },
    { transaction_id: 'T-US-2', account: 'us-main', amount_cents: 500, ...quiet },
  ]);
  for (const account of ['ca-main', 'us-main']) {
    await reconcileAccounts(h.db, { ...RANGE, now: NOW, account });
  }
  data = await loadReportData(h.db, RANGE);
});
afterAll(async () => {
  await h?.close();
});

describe('recon report over two accounts', () => {
  it('totals the open discrepancies per account and currency in the terminal report', () => {
    expect(formatReport(data)).toContain(
      [
        'unresolved discrepancies by account and currency',
        'account  currency  count    amount',
        '-------  --------  -----  --------',
        'ca-main  CAD           2  1,023.45',
        'us-main  CAD           1      5.00',
        'us-main  USD           1    777.00',
      ].join('\n'),
    );
  });

  it('carries the account totals and each item\u2019s account in --json', () => {
    const json = reportJson(data) as {
      unresolved_by_account: unknown[];
      largest_open: { account: string; currency: string }[];
    };
    expect(json.unresolved_by_account).toEqual([
      { account: 'ca-main', currency: 'CAD', count: 2, amount_cents: 102_345 },
      { account: 'us-main', currency: 'CAD', count: 1, amount_cents: 500 },
      { account: 'us-main', currency: 'USD', count: 1, amount_cents: 77_700 },
    ]);
    expect(new Set(json.largest_open.map((r) => r.account))).toEqual(new Set(['ca-main', 'us-main']));
  });

  it('names the account of every discrepancy row in --csv', () => {
    const [header, ...rows] = discrepanciesCsv(data.discrepancies).trimEnd().split('\r\n');
    const columns = header!.split(',');
    // Last, as in the workbench's export; read from the end, since JSON cells before it hold commas.
    expect(columns.at(-1)).toBe('account');
    const txn = columns.indexOf('transaction_id');
    const byTxn = Object.fromEntries(rows.map((r) => [r.split(',')[txn], r.split(',').at(-1)]));
    expect(byTxn).toEqual({
      'T-CA-1': 'ca-main',
      'T-CA-2': 'ca-main',
      'T-US-1': 'us-main',
      'T-US-2': 'us-main',
    });
  });

  it('shows the per-account totals in --html', () => {
    const html = renderHtmlReport(data, { generatedAt: NOW });
    const table = /<table id="account-table">.*?<\/table>/s.exec(html)?.[0] ?? '';
    const cells = [...table.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(cells).toEqual([
      ...['ca-main', 'CAD', '2', 'CAD 1,023.45'],
      ...['us-main', 'CAD', '1', 'CAD 5.00'],
      ...['us-main', 'USD', '1', 'USD 777.00'],
    ]);
  });
});
