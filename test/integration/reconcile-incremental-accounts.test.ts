import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Database } from '../../db/database.ts';
import { beginAccountScope, endAccountScope } from '../../reconcile/account-scope.ts';
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

// The property of reconcile-incremental.test.ts (a run over changed keys leaves the warehouse as a
// full run does) with two accounts in one warehouse, whose rows repeat each other's ids: the change
// log (recon_work.changed_keys) holds keys of every account, the dates' last matching is noted per
// account (recon_work.matched_days), and a run's shortcuts are asked of its account only: a first run
// leaves out the lifecycle's statements when its account holds no discrepancy
// (reconcile/apply-findings.ts) and the claim inserts' guards when it holds no claim
// (reconcile/rules/claims.ts, unlessNone). The second account's first run comes after the first
// account's runs left discrepancies and claims, over other dates; later rounds run both accounts over
// changed keys, in either order, with writes to both between them.
//
// RECON_INCREMENTAL_ACCOUNTS_SEEDS and RECON_INCREMENTAL_ACCOUNTS_ROUNDS run more (the suite runs one
// short seed).

// As in reconcile-incremental.test.ts: the rounds take turns at probing and hashing the scope's keys.
const access = vi.hoisted(() => ({ forced: undefined as boolean | undefined }));
vi.mock('../../reconcile/rules/keyed-rows.ts', async (original) => {
  const m = await original<typeof import('../../reconcile/rules/keyed-rows.ts')>();
  return { ...m, probeEach: (keys: number, rows: number) => access.forced ?? m.probeEach(keys, rows) };
});

// The reference warehouse takes none of a first run's shortcuts: told that its account holds rows in
// every table asked (reconcile/rules/statement.ts, accountHoldsAny), it runs every statement that a
// first run leaves out, and the runs that left them out must agree with it.
const holds = vi.hoisted(() => ({ always: false }));
vi.mock('../../reconcile/rules/statement.ts', async (original) => {
  const m = await original<typeof import('../../reconcile/rules/statement.ts')>();
  return {
    ...m,
    accountHoldsAny: (...a: Parameters<typeof m.accountHoldsAny>) =>
      holds.always ? Promise.resolve(true) : m.accountHoldsAny(...a),
  };
});

const ROUNDS = Number(process.env.RECON_INCREMENTAL_ACCOUNTS_ROUNDS ?? 3);
const SEEDS = (process.env.RECON_INCREMENTAL_ACCOUNTS_SEEDS ?? '7').split(',').map(Number);
const SECOND = 'second';
/** Each account's range: the second's starts later and, from the third round, ends later. */
const rangeOf = (account: string, round: number) =>
  account === SECOND
    ? { from: '2026-03-05', to: `2026-03-${String(11 + Math.floor(round / 3)).padStart(2, '0')}` }
    : { from: '2026-03-02', to: `2026-03-${String(10 + Math.floor(round / 2)).padStart(2, '0')}` };

let incremental: DatabaseHandle;
let full: DatabaseHandle;
beforeAll(async () => {
  [incremental, full] = await Promise.all([createTestDatabase(2), createTestDatabase(2)]);
});
afterAll(async () => Promise.all([incremental.close(), full.close()]));

type Loads = readonly [number, number, number];

/**
 * Applies a write to `account`'s rows: through the account's views (their default and check option
 * put the account on every row written, and a delete sees its rows only), or beside them with the
 * account for the writes that open their own transaction or name their account.
 */
async function writeTo(
  db: Kysely<Database>,
  account: string,
  loads: Loads,
  w: ReturnType<typeof randomWrite>,
): Promise<void> {
  if (w.unscoped || account === 'default') {
    await w.write(db, ...loads, account);
    return;
  }
  await db.transaction().execute(async (trx) => {
    await beginAccountScope(trx, account);
    await w.write(trx, ...loads, account);
    await endAccountScope(trx);
  });
}

async function run(
  h: DatabaseHandle,
  account: string,
  range: { from: string; to: string },
  now: string,
  asFull: boolean,
): Promise<ReconcileSummary> {
  holds.always = h === full;
  try {
    return await reconcileRange(h.db, { ...range, now, full: asFull, account });
  } finally {
    holds.always = false;
  }
}

describe('runs over changed keys of two accounts', () => {
  for (const seed of SEEDS) {
    it(`leave both accounts as full runs do (seed ${seed})`, async () => {
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
          const of = async (account: string): Promise<Loads> => [
            await insertLoad(h.db, 'report-transactions', account),
            await insertLoad(h.db, 'report-returns', account),
            await insertLoad(h.db, 'legacy-adjustments', account),
          ];
          return { default: await of('default'), [SECOND]: await of(SECOND) } as Record<string, Loads>;
        }),
      );
      const history: string[] = [];
      const apply = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const account = r.next() < 0.5 ? 'default' : SECOND;
          const w = randomWrite(r, incremental.db);
          history.push(`${account}: ${w.what}`);
          await writeTo(incremental.db, account, loads[0]![account]!, w);
          await writeTo(full.db, account, loads[1]![account]!, w);
        }
      };
      await apply(60);
      const scopes: Record<string, string[]> = { default: [], [SECOND]: [] };
      let keptDaysChecked = 0;
      for (let round = 0; round <= ROUNDS; round++) {
        const now = `2026-03-${String(14 + round).padStart(2, '0')}T12:00:00Z`;
        access.forced = [undefined, true, false][round % 3];
        if (round % 2 === 0) await dropKeyIndexes(incremental.db);
        // A crash before the runs every fourth round (the unlogged caches of both accounts empty).
        if (round % 4 === 3) await crashEmptiesUnlogged(incremental.db);
        // The second account's first run comes in the second round, after the first account's; then
        // the order alternates.
        const accounts =
          round === 0 ? ['default'] : round % 2 === 1 ? [SECOND, 'default'] : ['default', SECOND];
        for (const account of accounts) {
          const range = rangeOf(account, round);
          const [a, b] = [
            await run(incremental, account, range, now, false),
            await run(full, account, range, now, true),
          ];
          scopes[account]!.push(a.scope);
          const context = `seed ${seed}, round ${round}, ${account}, writes:\n${history.join('\n')}`;
          expect(await state(incremental.db), context).toEqual(await state(full.db));
          expect(a.discrepancies, context).toEqual(b.discrepancies);
          const kept = await keptAgainstView(incremental.db, range.from, range.to, account);
          expect(kept.wrong, context).toEqual([]);
          keptDaysChecked += kept.days;
          // Writes to either account between the two accounts' runs.
          history.push(`-- round ${round + 1}, after ${account}`);
          await apply(r.int(3));
        }
        person.at = `2026-03-${String(15 + round).padStart(2, '0')}T11:00:00Z`;
        await apply(1 + r.int(4));
      }
      expect(keptDaysChecked).toBeGreaterThan(ROUNDS);
      // Each account's first run is full; most later ones look at the changed keys only.
      for (const account of ['default', SECOND]) {
        expect(scopes[account]![0], account).toBe('full');
        expect(scopes[account]!.filter((s) => s === 'incremental').length, account).toBeGreaterThan(
          ROUNDS / 2 - 1,
        );
      }
    }, 240_000);
  }
});
