import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange, type ReconcileSummary } from '../../reconcile/reconcile-range.ts';
import { formatReport, formatSummary, reportJson } from '../../reconcile/report/format-summary.ts';
import { loadReportData } from '../../reconcile/report/report-data.ts';
import { renderHtmlReport } from '../../reconcile/report/render-html.ts';
import { discrepanciesCsv } from '../../reconcile/report/write-csv.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon as runRecon } from '../support/recon-process.ts';
import { insertLedger, insertLoad, insertReturns, insertTransactions } from '../support/recon-rows.ts';

// Money is never added across currencies (issue 9, section 1), and a report says which of its dates
// no reconcile run checked (section 5). A warehouse with CAD and USD on the same days, reconciled
// over part of the reported range.

const NOW = '2026-03-20T12:00:00Z';

let h: DatabaseHandle;
let dir: string;
let summary: ReconcileSummary;
beforeAll(async () => {
  h = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'recon-report-currency-'));
  const load = await insertLoad(h.db, 'report-transactions');
  const quiet = { notify_status: null }; // no notification expected: only ledger findings
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-CAD-OK', ...quiet },
    { transaction_id: 'T-CAD-MIL', amount_cents: 3_233_605, ...quiet }, // CAD 32,336.05, not booked
    { transaction_id: 'T-USD-MIL', amount_cents: 35_185, currency: 'USD', ...quiet }, // USD 351.85, not booked
    { transaction_id: 'T-USD-AMT', amount_cents: 2000, currency: 'USD', ...quiet }, // ledger says 1500
    {
      transaction_id: 'T-CAD-D3',
      amount_cents: 700,
      transaction_on: '2026-03-03',
      transaction_at: '2026-03-03T15:00:00Z',
      ...quiet,
    },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-CAD-OK' },
    { merchant_transaction_id: 'M-T-USD-AMT', amount_cents: 1500, currency: 'USD' },
  ]);
  const rload = await insertLoad(h.db, 'report-returns');
  await insertReturns(h.db, rload, [
    { return_transaction_id: 'R-CAD', amount_cents: 1000 },
    { return_transaction_id: 'R-USD', amount_cents: 250, currency: 'USD' },
  ]);
  summary = await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-03', now: NOW });
});
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every object in a JSON value that has a `*_cents` field, with the path to it. */
function centsObjects(value: unknown, path = '$'): { path: string; obj: Record<string, unknown> }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => centsObjects(v, `${path}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  const obj = value as Record<string, unknown>;
  const own = Object.keys(obj).some((k) => k.endsWith('_cents')) ? [{ path, obj }] : [];
  return [...own, ...Object.entries(obj).flatMap(([k, v]) => centsObjects(v, `${path}.${k}`))];
}

describe('reconcile summary', () => {
  it('counts and sums discrepancies by kind and currency, never across currencies', () => {
    expect(summary.discrepancies).toEqual([
      { kind: 'amount_mismatch', currency: 'USD', count: 1, amount_cents: 500 },
      { kind: 'missing_in_ledger', currency: 'CAD', count: 2, amount_cents: 3_234_305 },
      { kind: 'missing_in_ledger', currency: 'USD', count: 1, amount_cents: 35_185 },
    ]);
    expect(summary.totalDiscrepancies).toBe(4);
    const text = formatSummary(summary);
    expect(text).toContain(
      [
        'kind               currency  count     amount',
        '-----------------  --------  -----  ---------',
        'missing_in_ledger  CAD           2  32,343.05',
        'missing_in_ledger  USD           1     351.85',
        'amount_mismatch    USD           1       5.00',
      ].join('\n'),
    );
  });
});

describe('recon report over CAD and USD', () => {
  it('prints per-currency rows in every table of the terminal report, and names the unchecked dates', async () => {
    const text = formatReport(await loadReportData(h.db, { from: '2026-03-01', to: '2026-03-05' }));
    // The mixed figures the old report printed: all of 2026-03-02, all missing_in_ledger.
    expect(text).not.toContain('32,692.90');
    expect(text).not.toContain('32,694.90');
    expect(text).toContain(
      'coverage: INCOMPLETE: 3 of 5 dates were never checked by a reconcile run: 2026-03-01, 2026-03-04..2026-03-05\n',
    );
    expect(text).toContain(
      [
        'unresolved discrepancies by currency',
        'currency  count     amount',
        '--------  -----  ---------',
        'CAD           2  32,343.05',
        'USD           2     356.85',
      ].join('\n'),
    );
    expect(text).toContain(
      [
        'unresolved discrepancies by kind',
        'kind               currency  count     amount',
        '-----------------  --------  -----  ---------',
        'missing_in_ledger  CAD           2  32,343.05',
        'missing_in_ledger  USD           1     351.85',
        'amount_mismatch    USD           1       5.00',
      ].join('\n'),
    );
    expect(text).toContain(
      [
        'unresolved discrepancies by day',
        'day         currency  count     amount',
        '----------  --------  -----  ---------',
        '2026-03-02  CAD           1  32,336.05',
        '2026-03-02  USD           2     356.85',
        '2026-03-03  CAD           1       7.00',
      ].join('\n'),
    );
    expect(text).toContain(
      [
        'successful transactions by day',
        'day         type   currency  count     amount',
        '----------  -----  --------  -----  ---------',
        '2026-03-02  DEBIT  CAD           2  32,346.05',
        '2026-03-02  DEBIT  USD           2     371.85',
        '2026-03-03  DEBIT  CAD           1       7.00',
      ].join('\n'),
    );
    expect(text).toContain(
      [
        'returns by code',
        'code  currency  count  amount',
        '----  --------  -----  ------',
        '901   CAD           1   10.00',
        '901   USD           1    2.50',
      ].join('\n'),
    );
  });

  it('gives the same content as JSON, every *_cents beside its currency', async () => {
    const json = reportJson(await loadReportData(h.db, { from: '2026-03-01', to: '2026-03-05' })) as Record<
      string,
      unknown
    >;
    const withCents = centsObjects(json);
    expect(withCents.length).toBeGreaterThan(10);
    expect(withCents.filter((o) => !('currency' in o.obj)).map((o) => o.path)).toEqual([]);
    expect(json.coverage).toEqual({
      days: 5,
      checked_days: 2,
      complete: false,
      unchecked: [
        { from: '2026-03-01', to: '2026-03-01' },
        { from: '2026-03-04', to: '2026-03-05' },
      ],
      last_run_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} /),
    });
    expect(json.unresolved_by_day).toEqual([
      { day: '2026-03-02', currency: 'CAD', count: 1, amount_cents: 3_233_605 },
      { day: '2026-03-02', currency: 'USD', count: 2, amount_cents: 35_685 },
      { day: '2026-03-03', currency: 'CAD', count: 1, amount_cents: 700 },
    ]);
    expect(json.unresolved_by_currency).toEqual([
      { currency: 'CAD', count: 2, amount_cents: 3_234_305 },
      { currency: 'USD', count: 2, amount_cents: 35_685 },
    ]);
    expect(json.returns_by_code).toEqual([
      { code: '901', currency: 'CAD', count: 1, amount_cents: 1000 },
      { code: '901', currency: 'USD', count: 1, amount_cents: 250 },
    ]);
  });

  it('shows money per currency in the HTML tiles and a currency column in the problem list', async () => {
    const html = renderHtmlReport(await loadReportData(h.db, { from: '2026-03-01', to: '2026-03-05' }), {
      generatedAt: NOW,
    });
    expect(html).toContain('<div class="card">Money at stake<b>CAD 32,343.05</b><b>USD 356.85</b></div>');
    expect(html).not.toContain('32,699.90'); // CAD + USD as one figure
    // One volume chart per currency: a stacked bar must not add CAD to USD.
    expect(html).toContain('Successful transactions per day, CAD (amount)');
    expect(html).toContain('Successful transactions per day, USD (amount)');
    expect(html).toContain(
      '<th>Id</th><th>Day</th><th>Kind</th><th>Status</th><th>Currency</th><th class="num">At stake</th><th class="num">Expected</th>',
    );
    expect(html).toMatch(
      /<tr><td>#\d+<\/td><td>2026-03-02<\/td><td>missing_in_ledger<\/td><td>open<\/td><td>USD<\/td><td class="num">351.85<\/td><td class="num">351.85<\/td><td class="num"><\/td><td>T-USD-MIL<\/td><td>M-T-USD-MIL<\/td>/,
    );
    expect(html).toContain(
      '<strong>Incomplete:</strong> 3 of 5 dates were never checked by a reconcile run: 2026-03-01, 2026-03-04 to 2026-03-05.',
    );
  });

  it('exports CSV rows with the currency of each amount', async () => {
    const data = await loadReportData(h.db, { from: '2026-03-01', to: '2026-03-05' });
    const [header, ...rows] = discrepanciesCsv(data.discrepancies).trimEnd().split('\r\n');
    const columns = header!.split(',');
    const at = (name: string) => columns.indexOf(name);
    expect(
      rows
        .map((r) => r.split(','))
        .map((c) => [c[at('transaction_id')], c[at('currency')], c[at('expected_amount_cents')]]),
    ).toEqual([
      ['T-USD-AMT', 'USD', '2000'],
      ['T-CAD-MIL', 'CAD', '3233605'],
      ['T-USD-MIL', 'USD', '35185'],
      ['T-CAD-D3', 'CAD', '700'],
    ]);
  });

  it('never prints a clean "none" for a range no reconcile run covers', async () => {
    const data = await loadReportData(h.db, { from: '2026-04-01', to: '2026-04-03' });
    expect(data.coverage).toEqual({
      days: 3,
      checkedDays: 0,
      unchecked: [{ from: '2026-04-01', to: '2026-04-03' }],
      lastRunAt: null,
    });
    const text = formatReport(data);
    expect(text).toContain(
      'coverage: NOT CHECKED: no reconcile run covers any date of 2026-04-01..2026-04-03, so nothing below has been matched.\n',
    );
    expect(text).toContain(
      'unresolved discrepancies by kind\nnot checked: no reconcile run covers this range\n',
    );
    expect(text).not.toMatch(/unresolved discrepancies by (kind|day|currency)\nnone/);
    const html = renderHtmlReport(data);
    expect(html).toContain('<div class="card">Money at stake<b>not checked</b></div>');
    // The attention table, the largest and oldest items and the problem list: unknown, not "None."
    expect(html.match(/Not checked: no reconcile run covers this range\./g)).toHaveLength(4);
  });

  it('says every date was checked when runs cover the whole range', async () => {
    const text = formatReport(await loadReportData(h.db, { from: '2026-03-02', to: '2026-03-03' }));
    expect(text).toMatch(/^coverage: all 2 dates checked by reconcile runs \(latest committed \d{4}-/m);
  });

  it('recon report --json --html --csv writes the same per-currency content from the command line', async () => {
    const html = join(dir, 'report.html');
    const csv = join(dir, 'report.csv');
    const r = await runRecon(
      h.connectionString,
      ['report', '--from', '2026-03-01', '--to', '2026-03-05', '--json', '--html', html, '--csv', csv],
      { RECON_DATA_DIR: join(dir, 'data') },
    );
    expect(r.stderr).toContain('4 discrepancies written to');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { unresolved_by_kind: unknown; coverage: { complete: boolean } };
    expect(json.unresolved_by_kind).toEqual([
      { kind: 'missing_in_ledger', currency: 'CAD', count: 2, amount_cents: 3_234_305 },
      { kind: 'missing_in_ledger', currency: 'USD', count: 1, amount_cents: 35_185 },
      { kind: 'amount_mismatch', currency: 'USD', count: 1, amount_cents: 500 },
    ]);
    expect(json.coverage.complete).toBe(false);
    expect(readFileSync(html, 'utf8')).toContain('<b>CAD 32,343.05</b><b>USD 356.85</b>');
    expect(readFileSync(csv, 'utf8').split('\r\n')[0]).toContain(',currency,');
  });
});

describe('daily_settlement_totals', () => {
  it('counts transactions of unknown type apart and never guesses their sign in net_cents', async () => {
    const load = await insertLoad(h.db, 'report-transactions');
    const day = { transaction_on: '2026-05-01', transaction_at: '2026-05-01T15:00:00Z', notify_status: null };
    await insertTransactions(h.db, load, [
      { transaction_id: 'V-DEBIT', amount_cents: 1000, fee_cents: 25, ...day },
      { transaction_id: 'V-CREDIT', transaction_type: 'CREDIT', amount_cents: 500, fee_cents: 25, ...day },
      {
        transaction_id: 'V-UNKNOWN',
        transaction_type: null,
        raw_transaction_type: 'Z',
        amount_cents: 4000,
        fee_cents: 25,
        ...day,
      },
      { transaction_id: 'V-USD', currency: 'USD', amount_cents: 300, fee_cents: 10, ...day },
    ]);
    const rows = await sql`
      select currency, provider_payins_cents, provider_payouts_cents, provider_fees_cents, provider_net_cents,
        ledger_net_cents, difference_cents, unknown_type_count, unknown_type_amount_cents
      from daily_settlement_totals where business_date = '2026-05-01'
      order by currency`.execute(h.db);
    // The roll-forward (migration 0029): the row of unknown type stays out of the net, fee included.
    expect(rows.rows).toEqual([
      {
        currency: 'CAD',
        provider_payins_cents: 1000,
        provider_payouts_cents: 500,
        provider_fees_cents: 50,
        provider_net_cents: 450,
        ledger_net_cents: 0,
        difference_cents: 450,
        unknown_type_count: 1,
        unknown_type_amount_cents: 4000,
      },
      {
        currency: 'USD',
        provider_payins_cents: 300,
        provider_payouts_cents: 0,
        provider_fees_cents: 10,
        provider_net_cents: 290,
        ledger_net_cents: 0,
        difference_cents: 290,
        unknown_type_count: 0,
        unknown_type_amount_cents: 0,
      },
    ]);
    // Every column is documented, and analysts read the view.
    const comments = await sql<{ column_name: string; comment: string | null }>`
      select column_name, col_description('daily_settlement_totals'::regclass, ordinal_position::int) as comment
      from information_schema.columns where table_name = 'daily_settlement_totals'
      order by ordinal_position`.execute(h.db);
    expect(comments.rows.map((r) => r.column_name).slice(-2)).toEqual([
      'unknown_type_count',
      'unknown_type_amount_cents',
    ]);
    expect(comments.rows.filter((r) => !r.comment)).toEqual([]);
    const analyst = await h.db.connection().execute(async (conn) => {
      await sql`set role recon_analyst`.execute(conn);
      try {
        return (
          await sql<{
            n: number;
          }>`select sum(unknown_type_count)::int as n from daily_settlement_totals where business_date = '2026-05-01'`.execute(
            conn,
          )
        ).rows;
      } finally {
        await sql`reset role`.execute(conn);
      }
    });
    expect(analyst).toEqual([{ n: 1 }]);
  });
});
