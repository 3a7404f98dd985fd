import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datesBetween } from '../../domain/time/calendar.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { formatReport, reportJson } from '../../reconcile/report/format-summary.ts';
import { loadReportData, type ReportData } from '../../reconcile/report/report-data.ts';
import { renderHtmlReport } from '../../reconcile/report/render-html.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon as runRecon } from '../support/recon-process.ts';
import {
  insertLedger,
  insertLoad,
  insertReturns,
  insertTransactions,
  type TxnInput,
} from '../support/recon-rows.ts';
import { launchChromium } from '../support/browser.ts';

// The static report is action-first (issue 11, section 7): what needs attention and the largest and
// oldest open items with their ids come before the volumes; one outlier day does not flatten the
// volume chart; no unexplained "?" series. Twenty business days of CAD payins and payouts, a few USD,
// one day with a CAD 50,000.00 payin nobody booked.

const NOW = '2026-04-06T12:00:00Z';
const FROM = '2026-03-02';
const TO = '2026-03-27';
const SHOTS = process.env.RECON_SCREENSHOTS
  ? join(import.meta.dirname, '../../docs/screenshots')
  : join(tmpdir(), 'recon-report-screenshots');

let h: DatabaseHandle;
let dir: string;
let data: ReportData;
/** discrepancy_id by transaction id. */
const ids = new Map<string, number>();

function weekdays(from: string, to: string): string[] {
  return datesBetween(from, to).filter((d) => ![0, 6].includes(new Date(d).getUTCDay()));
}

beforeAll(async () => {
  h = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'recon-report-action-'));
  const load = await insertLoad(h.db, 'report-transactions');
  const quiet = { notify_status: null };
  const txns: TxnInput[] = [];
  const booked: TxnInput[] = [];
  weekdays(FROM, TO).forEach((day, i) => {
    const at = `${day}T15:00:00Z`;
    const normal: TxnInput[] = [
      { transaction_id: `T-${day}-1`, amount_cents: 180_000 + ((i * 37_000) % 90_000) },
      { transaction_id: `T-${day}-2`, amount_cents: 95_000 + ((i * 13_000) % 40_000) },
      {
        transaction_id: `T-${day}-3`,
        transaction_type: 'CREDIT',
        raw_transaction_type: 'CREDIT',
        amount_cents: 60_000 + ((i * 7_000) % 30_000),
      },
      { transaction_id: `T-${day}-U`, currency: 'USD', amount_cents: 40_000 + ((i * 9_000) % 20_000) },
    ].map((t) => ({ ...t, transaction_on: day, transaction_at: at, ...quiet }));
    txns.push(...normal);
    booked.push(...normal);
  });
  const extra = (day: string, t: TxnInput): TxnInput => ({
    transaction_on: day,
    transaction_at: `${day}T16:00:00Z`,
    ...quiet,
    ...t,
  });
  txns.push(
    extra('2026-03-16', { transaction_id: 'T-BIG', amount_cents: 5_000_000 }), // the outlier, not booked
    extra('2026-03-02', { transaction_id: 'T-OLD', amount_cents: 1_500 }), // the oldest, not booked
    extra('2026-03-11', { transaction_id: 'T-MID', amount_cents: 240_000 }), // not booked
    extra('2026-03-18', { transaction_id: 'T-USD-BIG', amount_cents: 80_000, currency: 'USD' }), // not booked
    extra('2026-03-12', { transaction_id: 'T-AMT', amount_cents: 10_000 }), // ledger says 9,000
    extra('2026-03-04', {
      transaction_id: 'T-UNK',
      transaction_type: null,
      raw_transaction_type: 'Z',
      amount_cents: 30_000,
    }),
  );
  await insertTransactions(h.db, load, txns);
  await insertLedger(h.db, [
    ...booked.map((t) => ({
      merchant_transaction_id: `M-${t.transaction_id}`,
      amount_cents: t.amount_cents!,
      currency: t.currency ?? 'CAD',
      transaction_type: t.transaction_type ?? 'DEBIT',
      booked_at: `${t.transaction_on}T15:00:01Z`,
    })),
    { merchant_transaction_id: 'M-T-AMT', amount_cents: 9_000, booked_at: '2026-03-12T16:00:01Z' },
    { merchant_transaction_id: 'M-T-UNK', amount_cents: 30_000, booked_at: '2026-03-04T16:00:01Z' },
  ]);
  const rload = await insertLoad(h.db, 'report-returns');
  await insertReturns(h.db, rload, [{ return_transaction_id: 'R-1', amount_cents: 1000 }]);
  await reconcileRange(h.db, { from: FROM, to: TO, now: NOW });
  const rows = await h.db
    .selectFrom('discrepancies')
    .select(['discrepancy_id', 'transaction_id', 'return_transaction_id'])
    .execute();
  for (const r of rows) ids.set(r.transaction_id ?? r.return_transaction_id ?? '', r.discrepancy_id);
  data = await loadReportData(h.db, { from: FROM, to: TO });
}, 120_000);

afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const html = (options: Parameters<typeof renderHtmlReport>[1] = {}) =>
  renderHtmlReport(data, { generatedAt: NOW, ...options });

/** The `<g class="bar…">` groups of the chart whose caption starts with `caption`. */
function bars(
  page: string,
  caption: string,
): { category: string; outlier: boolean; height: number; body: string }[] {
  const start = page.indexOf(`<figcaption>${caption}`);
  expect(start).toBeGreaterThan(-1);
  const figure = page.slice(start, page.indexOf('</figure>', start));
  return [...figure.matchAll(/<g class="bar( outlier)?" data-category="([^"]+)"[^>]*>(.*?)<\/g>/g)].map(
    (m) => ({
      category: m[2]!,
      outlier: m[1] !== undefined,
      body: m[3]!,
      height: [...m[3]!.matchAll(/<rect [^>]*height="([\d.]+)" fill="#/g)].reduce(
        (n, r) => n + Number(r[1]),
        0,
      ),
    }),
  );
}

describe('recon report --html, action first', () => {
  it('puts what needs attention first and the volumes and charts last', () => {
    const page = html();
    const at = (s: string) => {
      const i = page.indexOf(s);
      expect(i, s).toBeGreaterThan(-1);
      return i;
    };
    const order = [
      at('<h2 id="attention">What needs attention</h2>'),
      at('<h2 id="largest">'),
      at('<h2 id="oldest">'),
      at('<h2 id="problems">'),
      at('<h2 id="volumes">'),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(at('<svg')).toBeGreaterThan(at('<h2 id="volumes">'));
    expect(at('Successful transactions per day, CAD')).toBeGreaterThan(at('<h2 id="volumes">'));
    // The attention table: the kind in words, per currency, what it means and what to do (rules-in-words.ts).
    const attention = page.slice(
      at('id="attention-table"'),
      page.indexOf('</table>', at('id="attention-table"')),
    );
    expect(attention).toContain('<b>Missing in ledger</b><br><code>missing_in_ledger</code>');
    expect(attention).toContain('CAD 52,415.00<br>USD 800.00');
    expect(attention).toContain(
      'The provider moved (or may move) money that the merchant ledger has no entry for.',
    );
    expect(attention).toContain('Book the transaction in the ledger');
    expect(attention).toContain('<b>Amount mismatch</b>');
    expect(attention).toContain('CAD 10.00');
  });

  it('lists the largest open items per currency and the oldest, with their ids linked to the workbench', () => {
    const page = html({ workbenchUrl: 'https://recon.example.com/' });
    const table = (id: string) =>
      page.slice(page.indexOf(`id="${id}"`), page.indexOf('</table>', page.indexOf(`id="${id}"`)));
    const link = (txn: string) =>
      `<a href="https://recon.example.com/discrepancies/${ids.get(txn)}">#${ids.get(txn)}</a>`;
    const largest = table('largest-table');
    // CAD by money at stake: 50,000.00, 2,400.00, then 15.00 and 10.00; USD apart.
    const order = ['T-BIG', 'T-MID', 'T-OLD', 'T-AMT', 'T-USD-BIG'].map((t) => largest.indexOf(link(t)));
    expect(order.every((i) => i > -1)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(largest).toContain('<td class="num">CAD 50,000.00</td>');
    expect(largest).toContain('<td class="num">USD 800.00</td>');
    const oldest = table('oldest-table');
    expect(oldest.indexOf(link('T-OLD'))).toBeGreaterThan(-1);
    expect(oldest.indexOf(link('T-OLD'))).toBeLessThan(oldest.indexOf(link('T-BIG')));
    expect(oldest).toMatch(/<td>2026-03-02<\/td><td class="num">35<\/td>/); // 35 days before 2026-04-06
    // The kind row links to the workbench worklist of this kind and range.
    expect(page).toContain(
      'href="https://recon.example.com/?from=2026-03-02&#38;to=2026-03-27&#38;kind=missing_in_ledger"',
    );
    // Without a workbench address: the ids, and how to see one from the terminal.
    const plain = html();
    expect(plain).toContain(`<td>#${ids.get('T-BIG')}</td>`);
    expect(plain).toContain('recon discrepancies show ID');
    expect(plain).not.toContain('href="http');
  });

  it('lists every open problem by money at stake, says how many are not shown and how to see them all', () => {
    const page = html({ detailLimit: 2 });
    const problems = page.slice(page.indexOf('<h2 id="problems">'), page.indexOf('<h2 id="volumes">'));
    expect(problems).toContain('<h3>CAD: 5 open</h3>');
    expect(problems).toContain('Showing the 2 with the most money at stake; 3 more not shown.');
    expect(problems).toContain(
      '<code>recon discrepancies list --from 2026-03-02 --to 2026-03-27 --currency CAD</code>',
    );
    expect(problems).toContain('--csv FILE');
    expect(problems.indexOf(`#${ids.get('T-BIG')}<`)).toBeLessThan(problems.indexOf(`#${ids.get('T-MID')}<`));
    expect(problems).not.toContain(`#${ids.get('T-OLD')}<`); // the third CAD item is beyond the limit
    expect(problems).toContain('<h3>USD: 1 open</h3>');
    expect(problems).toContain('All 1 shown.');
  });

  it('keeps normal days visible when one day is an outlier, and marks the outlier with its true value', () => {
    const page = html();
    const cad = bars(page, 'Successful transactions per day, CAD');
    expect(cad).toHaveLength(20);
    const outliers = cad.filter((b) => b.outlier);
    expect(outliers.map((b) => b.category)).toEqual(['2026-03-16']);
    expect(outliers[0]!.body).toContain('▲ CAD 53,');
    // The plot is 220 units high: a normal day (about CAD 3,400) gets most of it, not 6%.
    for (const b of cad.filter((x) => !x.outlier)) expect(b.height, b.category).toBeGreaterThan(80);
    expect(outliers[0]!.height).toBeCloseTo(220, 0);
    expect(page).toContain('1 bar is an outlier');
    // A chart without outliers keeps its plain scale.
    expect(bars(page, 'Successful transactions per day, USD').filter((b) => b.outlier)).toEqual([]);
  });

  it('labels the transactions of unknown type plainly and says what they are', () => {
    const page = html();
    expect(page).not.toMatch(/>\?</);
    expect(page).toContain(
      'Unknown type<span class="key-note">: the provider&#39;s type code Z is neither DEBIT nor CREDIT; counted apart, never as a payin or payout</span>',
    );
    expect(page).toContain('<td>2026-03-04</td><td>Unknown type</td><td>CAD</td>');
    const text = formatReport(data);
    expect(text).toMatch(/^2026-03-04 {2}unknown +CAD +1 +300\.00$/m);
    expect(text).toContain("type unknown: the provider's type code (Z) is neither DEBIT nor CREDIT");
    expect(text).not.toMatch(/ \? /);
    const json = reportJson(data) as {
      successful_by_day: { type: string | null }[];
      unknown_type_codes: string[];
    };
    expect(json.successful_by_day.filter((v) => v.type === null)).toHaveLength(1);
    expect(json.unknown_type_codes).toEqual(['Z']);
  });

  it('prints the largest and oldest open items with their ids in the terminal and in JSON', () => {
    const text = formatReport(data);
    expect(text).toContain('largest open items');
    expect(text).toMatch(
      new RegExp(`^${ids.get('T-BIG')} +2026-03-16 +missing_in_ledger +CAD +50,000\\.00 +T-BIG$`, 'm'),
    );
    const json = reportJson(data) as {
      largest_open: { discrepancy_id: number; currency: string; stake_cents: number }[];
      oldest_open: { discrepancy_id: number }[];
    };
    expect(json.largest_open.slice(0, 2)).toMatchObject([
      { discrepancy_id: ids.get('T-BIG'), currency: 'CAD', stake_cents: 5_000_000 },
      { discrepancy_id: ids.get('T-MID'), currency: 'CAD', stake_cents: 240_000 },
    ]);
    expect(json.oldest_open[0]).toMatchObject({ discrepancy_id: ids.get('T-OLD') });
  });

  it('recon report --html links ids to RECON_WORKBENCH_URL, and --workbench-url wins', async () => {
    const run = (args: string[], env: Record<string, string>) =>
      runRecon(h.connectionString, ['report', '--from', FROM, '--to', TO, ...args], {
        RECON_DATA_DIR: join(dir, 'data'),
        ...env,
      });
    const file = join(dir, 'r.html');
    expect((await run(['--html', file], { RECON_WORKBENCH_URL: 'https://wb.example.com' })).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain(
      `href="https://wb.example.com/discrepancies/${ids.get('T-BIG')}"`,
    );
    const r = await run(['--html', file, '--workbench-url', 'http://127.0.0.1:8080/recon/'], {
      RECON_WORKBENCH_URL: 'https://wb.example.com',
    });
    expect(r.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain(
      `href="http://127.0.0.1:8080/recon/discrepancies/${ids.get('T-BIG')}"`,
    );
    const bad = await run(['--html', file], { RECON_WORKBENCH_URL: 'https://user:secret@wb.example.com' });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('RECON_WORKBENCH_URL is not an http(s) address without user or password');
    expect(bad.stderr).not.toContain('secret');
  });

  it('reads well in Chromium: normal bars are visible, the outlier is marked (screenshot for docs/finance.md)', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      await page.setContent(html({ workbenchUrl: 'https://recon.example.com', detailLimit: 20 }));
      const chart = page.locator('figure', { hasText: 'Successful transactions per day, CAD' });
      const heights = await chart
        .locator('g.bar:not(.outlier)')
        .evaluateAll((gs) => gs.map((g) => g.getBoundingClientRect().height));
      expect(heights).toHaveLength(19);
      for (const px of heights) expect(px).toBeGreaterThan(40);
      await expect
        .poll(() => chart.locator('g.bar.outlier text.outlier-value').textContent())
        .toContain('▲ CAD 53,');
      await page.screenshot({ path: join(SHOTS, 'report.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
