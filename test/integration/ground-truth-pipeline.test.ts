import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadConfig } from '../../config/config.ts';
import type { Source } from '../../domain/records.ts';
import { createProviderClient } from '../../provider/client/index.ts';
import { pullSource } from '../../ingest/pull-source.ts';
import { loadMerchantSide } from '../../sandbox/load-merchant-side.ts';
import { deriveMerchantView } from '../../sandbox/merchant-view.ts';
import { startSandbox } from '../../sandbox/server.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { scoreGroundTruth } from '../../sandbox/score-ground-truth.ts';
import { createTestDatabase } from '../support/database.ts';
import { splitWindows } from '../../workflows/windows.ts';

/**
 * The ground truth through the real pipeline, as `recon demo` runs it: the sandbox serves the merchant
 * view's history over HTTP on 127.0.0.1, every source is pulled with pullSource (client, parsers,
 * loader) in windows of at most 40 days, the ledger goes through loadLedger and the notification
 * history through its import, and reconcileRange must then report exactly the planted discrepancies.
 * (test/integration/reconcile-ground-truth.test.ts checks matching alone, with rows inserted directly.)
 * The range holds both 2026 daylight-saving changes (March 8, November 1).
 */

const SOURCES: Source[] = [
  'report-transactions',
  'report-returns',
  'legacy-transactions',
  'legacy-returns',
  'legacy-adjustments',
];
let h: DatabaseHandle;
beforeEach(async () => {
  h = await createTestDatabase();
});
afterEach(async () => h.close());

const cases = [
  { seed: 'pipeline', transactions: 2000, from: '2026-03-01', to: '2026-11-08' },
  { seed: 4242, transactions: 1200, from: '2026-03-05', to: '2026-11-03' },
];

describe('ground truth through the sandbox, HTTP pulls, parsers and loader', () => {
  for (const c of cases) {
    it(`finds exactly the planted discrepancies: seed ${c.seed}, ${c.transactions} transactions`, async () => {
      const view = deriveMerchantView(c);
      const sandbox = await startSandbox({ history: view.history });
      const config = loadConfig({ ...sandbox.env(), RECON_ENVIRONMENT: 'staging' });
      const client = createProviderClient(config, { env: {}, baseDelayMs: 5 });
      try {
        const { ledger, notifications } = await loadMerchantSide(h, view, 'staging');
        expect(ledger).toMatchObject({
          status: 'committed',
          rowsLoaded: view.ledger.length,
          rowsRejected: 0,
        });
        expect(notifications.quarantined).toBe(view.quarantinedNotifications);

        const pulled = splitWindows(view.range.from, view.range.to);
        expect(pulled.length).toBeGreaterThan(5);
        for (const w of pulled) {
          for (const source of SOURCES) {
            const s = await pullSource({ handle: h, client, config }, { source, ...w, origin: 'pull' });
            expect(s).toMatchObject({ status: 'committed', rowsRejected: 0 });
          }
        }
        // The warehouse holds what the view says the provider holds, legacy-only rows and the double
        // submissions included.
        const bySource = await h.db
          .selectFrom('provider_transactions')
          .select(['source', (eb) => eb.fn.countAll<string>().as('n')])
          .groupBy('source')
          .orderBy('source')
          .execute();
        const reportIds = new Set(view.providerTransactions.map((t) => t.transaction_id));
        const legacyOnly = view.legacyTransactions.filter((g) => !reportIds.has(g.transaction_id)).length;
        expect(legacyOnly).toBeGreaterThan(50);
        expect(bySource.map((r) => [r.source, Number(r.n)])).toEqual([
          ['legacy-transactions', legacyOnly],
          ['report-transactions', view.providerTransactions.length],
        ]);
        // Both daylight-saving days hold transactions.
        const dstDays = await h.db
          .selectFrom('provider_transactions')
          .select([sql<string>`transaction_on::text`.as('day')])
          .where('transaction_on', 'in', ['2026-03-08', '2026-11-01'])
          .groupBy('transaction_on')
          .orderBy('transaction_on')
          .execute();
        expect(dstDays.map((d) => d.day)).toEqual(['2026-03-08', '2026-11-01']);

        const summary = await reconcileRange(h.db, { ...view.range, now: view.asOf });
        const score = await scoreGroundTruth(h.db, view.expected);
        expect({ surplus: score.surplus, missed: score.missed }).toEqual({ surplus: [], missed: [] });
        expect({ precision: score.precision, recall: score.recall }).toEqual({ precision: 1, recall: 1 });
        expect(score.found).toBe(view.expected.length);
        expect(summary.totalDiscrepancies).toBe(view.expected.length);
        // Planted on legacy-only rows too, and duplicates served by the sandbox are found.
        const kinds = new Set(view.expected.map((e) => e.kind));
        for (const k of [
          'duplicate_merchant_transaction',
          'source_conflict',
          'missing_in_ledger',
          'return_not_booked',
        ])
          expect(kinds).toContain(k);
        const onLegacy = await h.db
          .selectFrom('discrepancies as d')
          .innerJoin('provider_transactions as p', 'p.transaction_id', 'd.transaction_id')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('p.source', '=', 'legacy-transactions')
          .executeTakeFirstOrThrow();
        expect(Number(onLegacy.n)).toBeGreaterThan(0);
      } finally {
        await client.close();
        await sandbox.close();
      }
    }, 60_000);
  }
});
