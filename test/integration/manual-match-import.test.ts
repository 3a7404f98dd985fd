import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { ImportRefused, importPairs } from '../../reconcile/manual-matches/import-pairs.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// `recon matches import`: a CSV of pairs, checked line by line, all or nothing, with a report per line.

let h: DatabaseHandle;
const REQ = { account: 'default', note: 'month-end clean-up', actor: { name: 'ann', mayWriteOff: false } };

beforeAll(async () => {
  h = await createTestDatabase();
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(h.db, load, [
    { transaction_id: 'T-1' },
    { transaction_id: 'T-2', amount_cents: 2000 },
    { transaction_id: 'T-3' },
  ]);
  await insertLedger(h.db, [
    { merchant_transaction_id: 'L-1' },
    { merchant_transaction_id: 'L-2a', amount_cents: 1500 },
    { merchant_transaction_id: 'L-2b', amount_cents: 500 },
    { merchant_transaction_id: 'L-3', amount_cents: 900 },
  ]);
  await reconcileRange(h.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
});
afterAll(async () => h?.close());

const matches = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from manual_matches`.execute(h.db)).rows[0]!.n;

describe('importing a CSV of pairs', () => {
  it('refuses the whole file when one line is refused, and says what each line did', async () => {
    const csv =
      'provider_transaction_id,ledger_merchant_transaction_id\nT-1,L-1\nT-2,L-2a\nT-2,L-2b\nT-3,L-3\nnot a pair\n';
    const refused = await importPairs(h.db, csv, REQ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ImportRefused);
    const lines = (refused as ImportRefused).report.lines;
    expect(lines.map((l) => [l.line, l.result])).toEqual([
      [2, 'checked'],
      [3, 'checked'],
      [4, 'checked'],
      [5, 'refused'],
      [6, 'refused'],
    ]);
    expect(lines[3]!.reason).toContain('the amounts differ by -100 cents CAD');
    expect(lines[4]!.reason).toContain('not a pair');
    expect(await matches()).toBe(0);
  });

  it('matches every group of a clean file (lines sharing an id are one 1:N match) and resolves them', async () => {
    const report = await importPairs(h.db, 'T-1,L-1\r\nT-2,L-2a\r\n"T-2","L-2b"\r\n', REQ);
    expect(report.applied).toBe(true);
    expect(report.matches).toBe(2);
    expect(report.lines.map((l) => [l.line, l.result])).toEqual([
      [1, 'matched'],
      [2, 'matched'],
      [3, 'matched'],
    ]);
    expect(report.lines[1]!.match_id).toBe(report.lines[2]!.match_id);
    const open = await sql<{
      k: string;
    }>`select kind || ':' || coalesce(transaction_id, merchant_transaction_id) as k
      from discrepancies where resolved_at is null and kind like 'missing%' order by 1`.execute(h.db);
    expect(open.rows.map((r) => r.k)).toEqual(['missing_at_provider:L-3', 'missing_in_ledger:T-3']);
    // Again: every line is now refused (already matched), and nothing changes.
    const again = await importPairs(h.db, 'T-1,L-1\n', REQ).catch((e: unknown) => e);
    expect((again as ImportRefused).report.lines[0]!.reason).toContain('is in manual match');
    expect(await matches()).toBe(2);
  });
});
