import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig, type Config } from '../../config/config.ts';
import { projectLegacyTransaction } from '../../sandbox/formats/legacy-csv.ts';
import type { ReturnRecord, Source, TransactionRecord } from '../../domain/records.ts';
import { addDays } from '../../domain/time/calendar.ts';
import { easternDayStartUtc } from '../../domain/time/eastern.ts';
import { createProviderClient, type ProviderClient } from '../../provider/client/index.ts';
import { LEGACY_TRANSACTION_FIELDS, pullSource } from '../../ingest/pull-source.ts';
import { createHistory } from '../../sandbox/history.ts';
import { startSandbox, type Sandbox } from '../../sandbox/server.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * THE round trip: the sandbox's reports, pulled with pullSource for every source and loaded by the
 * real parsers and loader into real PostgreSQL, give back exactly the sandbox's own records, column by
 * column. The windows hold both daylight-saving changes of 2026 (March 8 and November 1), with
 * transactions around the skipped hour and on both sides of the repeated one.
 */

const HISTORY = { seed: 20261101, transactions: 30_000, from: '2026-03-04', to: '2026-11-06' };
const WINDOWS = [
  { from: '2026-03-05', to: '2026-03-12' },
  { from: '2026-10-28', to: '2026-11-04' },
];
const SOURCES: Source[] = [
  'report-transactions',
  'report-returns',
  'legacy-transactions',
  'legacy-returns',
  'legacy-adjustments',
];
const history = createHistory(HISTORY);

const utcWindow = (w: { from: string; to: string }) => {
  return { start: easternDayStartUtc(w.from), end: easternDayStartUtc(addDays(w.to, 1)) };
};

/** PostgreSQL's timestamptz text (session in UTC) as the records write instants. */
function instant(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d+))?\+00$/.exec(value);
  return m ? `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z` : value;
}

function normalise(row: Record<string, unknown>, instants: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = instants.includes(k) ? instant(v) : v;
  return out;
}

function strip<T extends { kind: string; raw: string }>(r: T, extra: string[] = []): Record<string, unknown> {
  const { kind: _kind, raw: _raw, ...rest } = r;
  for (const k of extra) delete (rest as Record<string, unknown>)[k];
  return rest;
}

const byKey = (key: string) => (a: Record<string, unknown>, b: Record<string, unknown>) =>
  String(a[key]).localeCompare(String(b[key]));

async function rows(
  handle: DatabaseHandle,
  table: string,
  where: string,
  drop: string[],
  instants: string[],
): Promise<Record<string, unknown>[]> {
  const result = await sql<
    Record<string, unknown>
  >`select * from ${sql.table(table)} where ${sql.raw(where)}`.execute(handle.db);
  return result.rows.map((r) => {
    const copy = { ...r };
    const lineage = [
      'load_id',
      'first_load_id',
      'raw',
      'created_at',
      'updated_at',
      'source',
      'unknown_mask',
      'account',
    ];
    for (const k of [...drop, ...lineage]) delete copy[k];
    return normalise(copy, instants);
  });
}

let sandbox: Sandbox;
let config: Config;
let client: ProviderClient;

beforeAll(async () => {
  sandbox = await startSandbox({ history });
  config = loadConfig({ ...sandbox.env(), RECON_ENVIRONMENT: 'staging' });
  client = createProviderClient(config, { env: {}, baseDelayMs: 5 });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

describe('round trip: sandbox → client → parsers → loader → warehouse', () => {
  it('every source, JSON reports: the warehouse holds exactly the generator records', async () => {
    const handle = await createTestDatabase();
    try {
      for (const w of WINDOWS) {
        for (const source of SOURCES) {
          const summary = await pullSource({ handle, client, config }, { source, ...w, origin: 'pull' });
          expect(summary).toMatchObject({ status: 'committed', rowsRejected: 0 });
          expect(summary.rowsRead).toBe(summary.rowsLoaded);
        }
      }
      const windows = WINDOWS.map(utcWindow);

      // Report transactions: JSON carries no device type nor request type (spec 2.7).
      const transactions = windows.flatMap((w) => [...history.transactions(w)]);
      expect(transactions.length).toBeGreaterThan(1000);
      const expectedTx = transactions
        .map((t): TransactionRecord => ({ ...t, device_type: null, request_type: null }))
        .map((t) => strip(t))
        .sort(byKey('transaction_id'));
      const actualTx = await rows(
        handle,
        'provider_transactions',
        "source = 'report-transactions'",
        [],
        ['transaction_at'],
      );
      expect(actualTx.sort(byKey('transaction_id'))).toEqual(expectedTx);

      // Report returns, then legacy returns where the report did not already bring the same id.
      const reportReturns = windows.flatMap((w) => [...history.returns(w)]);
      const reportReturnIds = new Set(reportReturns.map((r) => r.return_transaction_id));
      expect(reportReturns.length).toBeGreaterThan(20);
      const actualReturns = await rows(
        handle,
        'provider_returns',
        "source = 'report-returns'",
        [],
        ['original_transaction_at'],
      );
      // A JSON return record has no external reference of its own nor a settlement date (its
      // reportDate is report_date): unknown (null) in the warehouse.
      expect(actualReturns.sort(byKey('return_transaction_id'))).toEqual(
        reportReturns
          .map((r) => strip({ ...r, external_reference: null, settlement_date: null }))
          .sort(byKey('return_transaction_id')),
      );
      const legacyReturns = windows.flatMap((w) => [...history.legacyReturns(w)]);
      expect(legacyReturns.some((r) => reportReturnIds.has(r.return_transaction_id))).toBe(true);
      const actualLegacyReturns = await rows(
        handle,
        'provider_returns',
        "source = 'legacy-returns'",
        [],
        ['original_transaction_at'],
      );
      expect(actualLegacyReturns.sort(byKey('return_transaction_id'))).toEqual(
        legacyReturns
          .filter((r: ReturnRecord) => !reportReturnIds.has(r.return_transaction_id))
          .map((r) => strip(r))
          .sort(byKey('return_transaction_id')),
      );

      // Legacy transactions (type 5, every field but 19), Eastern times back to the same instants.
      const legacy = windows.flatMap((w) => [...history.legacyTransactions(w)]);
      const actualLegacy = await rows(handle, 'legacy_transactions', 'true', [], ['transaction_at']);
      expect(actualLegacy.sort(byKey('transaction_id'))).toEqual(
        legacy
          .map((r) => strip(projectLegacyTransaction(r, LEGACY_TRANSACTION_FIELDS)))
          .sort(byKey('transaction_id')),
      );
      const folds = legacy.filter((r) => r.local_time_flag === 'dst_fold');
      expect(folds.length).toBeGreaterThan(0);
      expect(legacy.some((r) => history.findByTransactionId(r.transaction_id)!.channel === 'both')).toBe(
        true,
      );

      // Adjustments: the warehouse key is the parser's hash, compared by the fields instead.
      const adjustments = windows.flatMap((w) => [...history.adjustments(w)]);
      expect(adjustments.length).toBeGreaterThan(5);
      const actualAdjustments = await rows(
        handle,
        'provider_adjustments',
        'true',
        ['adjustment_id', 'adjustment_key'],
        [],
      );
      expect(actualAdjustments.sort(byKey('transaction_id'))).toEqual(
        adjustments.map((a) => strip(a, ['adjustment_key'])).sort(byKey('transaction_id')),
      );

      // The DST material really is there: report instants inside the repeated hour on both sides,
      // and around the skipped hour.
      const at = transactions.map((t) => t.transaction_at!);
      expect(at.some((t) => t >= '2026-11-01T05:00:00' && t < '2026-11-01T06:00:00')).toBe(true); // 01:xx EDT
      expect(at.some((t) => t >= '2026-11-01T06:00:00' && t < '2026-11-01T07:00:00')).toBe(true); // 01:xx EST
      expect(at.some((t) => t >= '2026-03-08T06:00:00' && t < '2026-03-08T07:00:00')).toBe(true); // 01:xx EST
      expect(at.some((t) => t >= '2026-03-08T07:00:00' && t < '2026-03-08T08:00:00')).toBe(true); // 03:xx EDT
      expect(at.some((t) => !t.endsWith('000Z'))).toBe(true); // microseconds survive
    } finally {
      await handle.close();
    }
  });

  it('CSV and zipped report bodies round-trip too, and a second pull changes nothing', async () => {
    const handle = await createTestDatabase();
    try {
      const w = WINDOWS[1]!;
      const window = utcWindow(w);
      for (const source of ['report-transactions', 'report-returns'] as const) {
        const first = await pullSource(
          { handle, client, config },
          { source, ...w, origin: 'pull', output: { type: 'CSV', zip: true } },
        );
        expect(first).toMatchObject({ status: 'committed', rowsRejected: 0, zipped: true });
        const again = await pullSource(
          { handle, client, config },
          { source, ...w, origin: 'pull', output: { type: 'CSV', zip: true } },
        );
        expect(again).toMatchObject({ rowsInserted: 0, rowsUpdated: 0, rowsUnchanged: first.rowsLoaded });
      }
      const actualTx = await rows(handle, 'provider_transactions', 'true', [], ['transaction_at']);
      expect(actualTx.sort(byKey('transaction_id'))).toEqual(
        [...history.transactions(window)].map((t) => strip(t)).sort(byKey('transaction_id')),
      );
      // The CSV return layout has no original type nor original external reference (spec 2.8), and
      // no report date (its Settlement Date is settlement_date).
      const actualReturns = await rows(handle, 'provider_returns', 'true', [], ['original_transaction_at']);
      expect(actualReturns.sort(byKey('return_transaction_id'))).toEqual(
        [...history.returns(window)]
          .map((r) =>
            strip({
              ...r,
              original_transaction_type: null,
              original_external_reference: null,
              report_date: null,
            }),
          )
          .sort(byKey('return_transaction_id')),
      );

      // The same window as JSON, then as zipped CSV again: no restatement either way (issue 9). What
      // one format lacks, the other fills in; nothing is nulled by the format that does not carry it.
      for (const output of [
        { type: 'JSON', zip: false },
        { type: 'CSV', zip: true },
      ] as const) {
        for (const source of ['report-transactions', 'report-returns'] as const) {
          const switched = await pullSource(
            { handle, client, config },
            { source, ...w, origin: 'pull', output },
          );
          expect(switched).toMatchObject({ rowsInserted: 0, rowsUpdated: 0 });
        }
      }
      const restated = await sql<{ n: number }>`select count(*)::int as n from row_history`.execute(
        handle.db,
      );
      expect(restated.rows[0]!.n).toBe(0);
      const bothTx = await rows(handle, 'provider_transactions', 'true', [], ['transaction_at']);
      expect(bothTx.sort(byKey('transaction_id'))).toEqual(
        [...history.transactions(window)].map((t) => strip(t)).sort(byKey('transaction_id')),
      );
      const bothReturns = await rows(handle, 'provider_returns', 'true', [], ['original_transaction_at']);
      expect(bothReturns.sort(byKey('return_transaction_id'))).toEqual(
        [...history.returns(window)].map((r) => strip(r)).sort(byKey('return_transaction_id')),
      );
    } finally {
      await handle.close();
    }
  });
});
