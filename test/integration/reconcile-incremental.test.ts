import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange, type ReconcileSummary } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import {
  crashEmptiesUnlogged,
  dropKeyIndexes,
  keptAgainstView,
  person,
  randomWrite,
  state,
} from '../support/incremental-writes.ts';
import { insertLoad } from '../support/recon-rows.ts';
import { generator } from '../support/seeded-random.ts';

// A run over the keys changed since its range was last matched (reconcile/incremental.ts) must leave
// the warehouse exactly as a full run does. Two warehouses receive the same random writes, round after
// round: provider rows (report and legacy, duplicates, dates moved out of the range, deletions), ledger
// entries (DEBIT, CREDIT, RETURN), notifications, legacy twins, returns (of originals loaded before or
// after them), status lookups, the fee schedule and people's resolutions, and the returns loop (return
// notifications, returns with a next action date, provider adjustments, ledger ADJUSTMENT and
// REPRESENTMENT entries); one is reconciled as it
// chooses (incremental), the other in full, over a range that grows a day every other round. Their discrepancies, events and claims must agree row for
// row, last_seen_at aside (a run over changed keys moves it only on what it looked at), and so must
// their near-miss candidates.

// The scope's statements find their keys' rows one index descent a key or by a hash join, chosen from
// the number of keys (reconcile/rules/keyed-rows.ts); at this size either could be chosen, so the rounds
// take turns: as chosen, every statement probing, every statement hashing.
const access = vi.hoisted(() => ({ forced: undefined as boolean | undefined }));
vi.mock('../../reconcile/rules/keyed-rows.ts', async (original) => {
  const m = await original<typeof import('../../reconcile/rules/keyed-rows.ts')>();
  return { ...m, probeEach: (keys: number, rows: number) => access.forced ?? m.probeEach(keys, rows) };
});

// The roll-forward's kept items are read by key, or every item of the run's days when their key
// indexes are not built (reconcile/rules/settlement-kept-keys.ts, keyIndexes): at this size the runs
// build them, so some rounds read by day as a run over a few days of a long history does.
const keptRead = vi.hoisted(() => ({ byDay: false }));
vi.mock('../../reconcile/rules/settlement-kept-keys.ts', async (original) => {
  const m = await original<typeof import('../../reconcile/rules/settlement-kept-keys.ts')>();
  return {
    ...m,
    keyIndexes: (...a: Parameters<typeof m.keyIndexes>) =>
      keptRead.byDay && a[1] !== undefined ? Promise.resolve('by day' as const) : m.keyIndexes(...a),
  };
});

const ROUNDS = Number(process.env.RECON_INCREMENTAL_ROUNDS ?? 10);
// Seed 11: a transaction moved to another date kept its discrepancies on the old one, and a later
// run's roll-forward of the new day found nothing explaining it (reconcile/apply-findings.ts).
const SEEDS = (process.env.RECON_INCREMENTAL_SEEDS ?? '2026,5,11').split(',').map(Number);
const FROM = '2026-03-02';
/** The range ends on the 10th, and a day later every other round, as a nightly window grows a new day. */
const toOf = (round: number) => `2026-03-${String(10 + Math.floor(round / 2)).padStart(2, '0')}`;

let incremental: DatabaseHandle;
let full: DatabaseHandle;
beforeAll(async () => {
  [incremental, full] = await Promise.all([createTestDatabase(2), createTestDatabase(2)]);
});
afterAll(async () => Promise.all([incremental.close(), full.close()]));

async function run(
  h: DatabaseHandle,
  to: string,
  now: string,
  asFull: boolean,
  from = FROM,
): Promise<ReconcileSummary> {
  return reconcileRange(h.db, { from, to, now, full: asFull });
}

/**
 * Every other round, a run of another range that overlaps the end of the main one and reaches past
 * it (as a person's `recon reconcile` of a few days): its lifecycle changes discrepancies around the
 * main range, whose candidates the next run over changed keys must search again.
 */
const OTHER = { from: '2026-03-08', to: '2026-03-16' };

describe('a run over changed keys', () => {
  for (const seed of SEEDS) {
    it(`leaves discrepancies, events and claims as a full run does (seed ${seed})`, async () => {
      const r = generator(seed);
      const loads = await Promise.all(
        [incremental, full].map(async (h) => {
          await sql`truncate provider_transactions, legacy_transactions, provider_returns, merchant_ledger,
            notifications, status_lookups, fee_schedule, provider_adjustments, transaction_matches, notification_matches,
            return_matches, source_matches, discrepancies, discrepancy_events, discrepancy_totals cascade`.execute(
            h.db,
          );
          await sql`truncate recon_work.matched_days, recon_work.changed_keys, recon_work.matched_ranges cascade`.execute(
            h.db,
          );
          return [
            await insertLoad(h.db, 'report-transactions'),
            await insertLoad(h.db, 'report-returns'),
            await insertLoad(h.db, 'legacy-adjustments'),
          ] as const;
        }),
      );
      const history: string[] = [];
      const apply = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const { what, write } = randomWrite(r, incremental.db);
          history.push(what);
          await write(incremental.db, ...loads[0]!);
          await write(full.db, ...loads[1]!);
        }
      };
      await apply(40);
      const scopes: string[] = [];
      let keptDaysChecked = 0;
      for (let round = 0; round <= ROUNDS; round++) {
        // A day later each round, so that dates become due and pending rows stuck as they go.
        const now = `2026-03-${String(14 + round).padStart(2, '0')}T12:00:00Z`;
        const to = toOf(round);
        access.forced = [undefined, true, false][round % 3];
        if (round % 2 === 1) {
          await run(incremental, OTHER.to, now, false, OTHER.from);
          await run(full, OTHER.to, now, true, OTHER.from);
        }
        // Every other round, the kept items' key indexes dropped: the run over changed keys reads its
        // days' kept items whole, or builds them again (reconcile/rules/settlement-kept.ts, keyIndexes).
        if (round % 2 === 0) await dropKeyIndexes(incremental.db);
        // Every fourth round, a crash before the runs: the unlogged caches empty, the logged state kept.
        if (round % 4 === 2) await crashEmptiesUnlogged(incremental.db);
        keptRead.byDay = round % 3 === 1;
        const [a, b] = [await run(incremental, to, now, false), await run(full, to, now, true)];
        scopes.push(a.scope);
        const context = `seed ${seed}, round ${round}, writes:\n${history.join('\n')}`;
        expect(await state(incremental.db), context).toEqual(await state(full.db));
        const kept = await keptAgainstView(incremental.db, FROM, to);
        expect(kept.wrong, context).toEqual([]);
        keptDaysChecked += kept.days;
        expect(a.discrepancies, context).toEqual(b.discrepancies);
        history.push(`-- round ${round + 1}`);
        person.at = `2026-03-${String(15 + round).padStart(2, '0')}T11:00:00Z`;
        await apply(1 + r.int(4));
      }
      // The kept days of the roll-forward were read from the kept items, and checked against the view.
      expect(keptDaysChecked).toBeGreaterThan(ROUNDS);
      // The first run of the range is full; most later ones look at the changed keys only.
      expect(scopes[0]).toBe('full');
      expect(scopes.filter((s) => s === 'incremental').length).toBeGreaterThan(ROUNDS / 2);
      // 30-45 s a seed on a quiet machine; more than the suite's 60 s at a load of 20.
    }, 240_000);
  }
});
