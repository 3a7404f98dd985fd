import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { SCOPED } from '../../reconcile/account-scope.ts';
import { reconcileRange, type ReconcileRequest } from '../../reconcile/reconcile-range.ts';
import { formatSummary } from '../../reconcile/report/format-summary.ts';
import { RULES } from '../../reconcile/rules/run-rules.ts';
import { createTestDatabase } from '../support/database.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// A run of a range nothing has written to since its last run takes that run's findings instead of
// matching again (reconcile/matching-reuse.ts). It must find exactly what matching would, and any
// write that matching reads, committed by anyone at any time, must make the next run match.
// A run whose dates were matched before goes over the changed keys instead (reconcile/incremental.ts,
// the first test): reuse is what a run tries when it would match in full, so the other tests forget
// the dates' state (recon_work.matched_days) before each run.

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

const MARCH: ReconcileRequest = { from: '2026-03-01', to: '2026-03-31', now: '2026-04-20T12:00:00Z' };
const at = (day: number) => `2026-04-${day}T12:00:00Z`;

beforeEach(async () => {
  await sql`truncate provider_transactions, merchant_ledger, notifications, transaction_matches,
    notification_matches, discrepancies, discrepancy_events, discrepancy_totals, reconcile_runs cascade`.execute(
    h.db,
  );
  await sql`truncate recon_work.data_changes, recon_work.matched_ranges, recon_work.matched_range_findings,
    recon_work.matched_days, recon_work.changed_keys cascade`.execute(h.db);
  const load = await insertLoad(h.db, 'report-transactions');
  await insertTransactions(
    h.db,
    load,
    [
      { transaction_id: 'T-OK' },
      { transaction_id: 'T-AMT', amount_cents: 2000 },
      { transaction_id: 'T-MIL' },
    ].map((t) => ({ ...t, notify_status: null })),
  );
  await insertLedger(h.db, [
    { merchant_transaction_id: 'M-T-OK' },
    { merchant_transaction_id: 'M-T-AMT' },
    { merchant_transaction_id: 'M-GONE', booked_at: '2026-03-03T15:00:00Z' },
  ]);
});

/** A run after the dates' state is gone: it cannot go over changed keys, and tries reuse. */
async function reconcileWithoutDays(req: ReconcileRequest, rules?: typeof RULES) {
  await sql`truncate recon_work.matched_days`.execute(h.db);
  return reconcileRange(h.db, req, rules);
}

async function discrepancies() {
  const r = await sql<{ discrepancy_key: string; status: string; last_seen_at: string }>`
    select discrepancy_key, status, last_seen_at from discrepancies order by discrepancy_key`.execute(h.db);
  return r.rows;
}

const keys = async () =>
  (await discrepancies()).filter((d) => d.status !== 'resolved').map((d) => d.discrepancy_key);
const FOUND = ['amount_mismatch:T-AMT', 'missing_at_provider:M-GONE', 'missing_in_ledger:T-MIL'];

describe('a run over data nothing wrote since the last run of its range', () => {
  it("keeps its dates' state while the follow-up of non-final transactions can reconcile them again, not longer", async () => {
    const days = async () =>
      (await sql<{ n: number }>`select count(*)::int as n from recon_work.matched_days`.execute(h.db))
        .rows[0]!.n;
    await reconcileRange(h.db, { ...MARCH, now: at(20) });
    expect(await days()).toBe(31);
    // Sixty days later, a run of one of its days: the other 30 were last matched long ago, but the
    // follow-up (RECON_FOLLOW_UP_DAYS, 120) reaches them, and its run goes over the changed keys.
    await sql`update recon_work.matched_days set matched_at = matched_at - interval '60 days'`.execute(h.db);
    const day = { from: '2026-03-02', to: '2026-03-02' };
    await reconcileRange(h.db, { ...day, now: '2026-05-20T12:00:00Z', followUpDays: 120 });
    expect(await days()).toBe(31);
    const again = await reconcileRange(h.db, { ...MARCH, now: '2026-05-21T12:00:00Z' });
    expect(again.scope).toBe('incremental');
    // Past the follow-up's reach of the run's day, March's state is dropped: nothing pins the changes.
    await reconcileRange(h.db, { ...day, now: '2026-05-20T12:00:00Z', followUpDays: 30 });
    expect(await days()).toBe(0);
    expect((await reconcileRange(h.db, { ...MARCH, now: at(22) })).fullBecause).toBe(
      'first run of these dates',
    );
  });

  it('goes over the changed keys when its dates were matched before: none, so it looks at nothing', async () => {
    await reconcileRange(h.db, { ...MARCH, now: at(20) });
    const before = await discrepancies();
    const again = await reconcileRange(h.db, { ...MARCH, now: at(21) });
    expect([again.matching, again.scope]).toEqual(['matched', 'incremental']);
    expect(again.matched).toEqual({ transactions: 0, notifications: 0, legacy: 0, returns: 0 });
    expect(again.lifecycle).toEqual({ opened: 0, reopened: 0, changed: 0, resolved: 0, unchanged: 0 });
    expect(again.totalDiscrepancies).toBe(3);
    // Nothing looked at: last_seen_at stays where the first run left it.
    expect(await discrepancies()).toEqual(before);
  });

  it('reuses that run’s findings: the same discrepancies and counts, last_seen_at moved', async () => {
    const first = await reconcileWithoutDays({ ...MARCH, now: at(20) });
    expect(first.matching).toBe('matched');
    expect(await keys()).toEqual(FOUND);
    const second = await reconcileWithoutDays({ ...MARCH, now: at(21) });
    expect(second.matching).toBe('reused');
    expect(formatSummary(second)).toContain(
      '(reused: nothing matching reads changed since the last run of this range)',
    );
    expect(formatSummary(first)).not.toContain('reused');
    expect(second.matched).toEqual(first.matched);
    expect(second.discrepancies).toEqual(first.discrepancies);
    expect(second.lifecycle).toEqual({ opened: 0, reopened: 0, changed: 0, resolved: 0, unchanged: 3 });
    for (const d of await discrepancies())
      expect(new Date(d.last_seen_at).toISOString()).toBe('2026-04-21T12:00:00.000Z');
  });

  it('matches again after a write to any table matching reads, and finds what changed', async () => {
    await reconcileWithoutDays({ ...MARCH, now: at(20) });
    await insertLedger(h.db, [{ merchant_transaction_id: 'M-T-MIL' }]);
    const afterLedger = await reconcileWithoutDays({ ...MARCH, now: at(21) });
    expect(afterLedger.matching).toBe('matched');
    expect(await keys()).toEqual(['amount_mismatch:T-AMT', 'missing_at_provider:M-GONE']);

    await sql`update provider_transactions set amount_cents = 1000 where transaction_id = 'T-AMT'`.execute(
      h.db,
    );
    expect((await reconcileWithoutDays({ ...MARCH, now: at(22) })).matching).toBe('matched');
    expect(await keys()).toEqual(['missing_at_provider:M-GONE']);

    // An update that changes no row is still a write: matching runs (never a stale reuse).
    await sql`update fee_schedule set fixed_cents = fixed_cents where false`.execute(h.db);
    expect((await reconcileWithoutDays({ ...MARCH, now: at(23) })).matching).toBe('matched');
    expect((await reconcileWithoutDays({ ...MARCH, now: at(24) })).matching).toBe('reused');
  });

  it('matches again when a write that was under way during the last run commits after it', async () => {
    const writer = new pg.Client({ connectionString: h.connectionString });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query(
        `insert into merchant_ledger (merchant_transaction_id, transaction_type, amount_cents, currency, status, booked_at)
         values ('M-T-MIL', 'DEBIT', 1000, 'CAD', 'SUCCESSFUL', '2026-03-02T15:00:01Z')`,
      );
      // The run does not see the uncommitted entry, and another write commits meanwhile.
      await reconcileWithoutDays({ ...MARCH, now: at(20) });
      await reconcileWithoutDays({ ...MARCH, now: at(21) });
      const load = await insertLoad(h.db, 'report-transactions');
      await insertTransactions(h.db, load, [{ transaction_id: 'T-LATER', transaction_on: '2026-04-02' }]);
      expect((await reconcileWithoutDays({ ...MARCH, now: at(22) })).matching).toBe('matched');
      expect(await keys()).toEqual(FOUND);
      await writer.query('commit');
    } finally {
      await writer.end();
    }
    const after = await reconcileWithoutDays({ ...MARCH, now: at(23) });
    expect(after.matching).toBe('matched');
    expect(await keys()).toEqual(['amount_mismatch:T-AMT', 'missing_at_provider:M-GONE']);
  });

  it('matches again under other settings, another due date or other rules', async () => {
    await reconcileWithoutDays({ ...MARCH, now: at(20) });
    const graver = await reconcileWithoutDays({ ...MARCH, now: at(21), settings: { graceBusinessDays: 40 } });
    expect(graver.matching).toBe('matched');
    // With 40 business days of grace on 2026-04-21, M-GONE (booked 2026-03-03) is not due yet.
    expect(await keys()).toEqual(['amount_mismatch:T-AMT', 'missing_in_ledger:T-MIL']);
    expect(
      (await reconcileWithoutDays({ ...MARCH, now: at(21), settings: { graceBusinessDays: 40 } })).matching,
    ).toBe('reused');
    // A later day makes M-GONE due: the due date is part of what a run is reused for.
    const due = await reconcileWithoutDays({
      ...MARCH,
      now: '2026-05-20T12:00:00Z',
      settings: { graceBusinessDays: 40 },
    });
    expect(due.matching).toBe('matched');
    expect(await keys()).toEqual(FOUND);
    const fewer = await reconcileRange(
      h.db,
      { ...MARCH, now: '2026-05-20T12:00:00Z', settings: { graceBusinessDays: 40 } },
      RULES.filter((r) => r.name !== 'missing_in_ledger'),
    );
    expect(fewer.matching).toBe('matched');
    // Without missing_in_ledger nothing explains T-MIL's money: the settlement roll-forward says so.
    expect(await keys()).toEqual([
      'amount_mismatch:T-AMT',
      'missing_at_provider:M-GONE',
      'settlement_unexplained:2026-03-02:CAD',
    ]);
  });

  it('is not undone by a run of another account; a load counts for every account', async () => {
    const acme = await insertLoad(h.db, 'report-transactions', 'acme');
    await insertTransactions(h.db, acme, [
      { transaction_id: 'T-ACME', account: 'acme', notify_status: null },
    ]);
    await reconcileWithoutDays({ ...MARCH, now: at(20) });
    const other = await reconcileWithoutDays({ ...MARCH, account: 'acme', now: at(20) });
    expect(other.matching).toBe('matched');
    expect(other.totalDiscrepancies).toBe(1);
    expect((await reconcileWithoutDays({ ...MARCH, now: at(21) })).matching).toBe('reused');
    await insertLedger(h.db, [{ merchant_transaction_id: 'M-T-ACME', account: 'acme' }]);
    expect((await reconcileWithoutDays({ ...MARCH, now: at(22) })).matching).toBe('matched');
    const acmeAgain = await reconcileWithoutDays({ ...MARCH, account: 'acme', now: at(22) });
    expect([acmeAgain.matching, acmeAgain.totalDiscrepancies]).toEqual(['matched', 0]);
  });

  it('keeps the lifecycle: a discrepancy resolved as fixed in the ledger but still found is reopened', async () => {
    await reconcileWithoutDays({ ...MARCH, now: at(20) });
    await sql`update discrepancies set status = 'resolved', resolution = 'fixed_in_ledger', resolved_by = 'ops',
      resolved_at = '2026-04-20T13:00:00Z' where discrepancy_key = 'amount_mismatch:T-AMT'`.execute(h.db);
    const again = await reconcileWithoutDays({ ...MARCH, now: at(21) });
    expect(again.matching).toBe('reused');
    expect(again.lifecycle.reopened).toBe(1);
    expect(await keys()).toEqual(FOUND);
  });

  it('keeps the stored matchings as a cache: UNLOGGED, a range forgotten with its findings', async () => {
    // A crash empties both tables together: the next run matches (migration 0040).
    const r = await sql<{
      relname: string;
      relpersistence: string;
      fks: number;
    }>`select c.relname, c.relpersistence,
        (select count(*)::int from pg_constraint k where k.conrelid = c.oid and k.contype = 'f') as fks
      from pg_class c where c.oid in ('recon_work.matched_ranges'::regclass, 'recon_work.matched_range_findings'::regclass)
      order by c.relname`.execute(h.db);
    expect(r.rows).toEqual([
      { relname: 'matched_range_findings', relpersistence: 'u', fks: 0 },
      { relname: 'matched_ranges', relpersistence: 'u', fks: 0 },
    ]);
    const stored = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from recon_work.matched_range_findings`.execute(
          h.db,
        )
      ).rows[0]!.n;
    await reconcileWithoutDays({ ...MARCH, now: at(20) });
    expect(await stored()).toBe(3);
    // A run over changed keys does not find the whole range: it forgets the range's matching.
    await insertLedger(h.db, [{ merchant_transaction_id: 'M-T-MIL' }]);
    expect((await reconcileRange(h.db, { ...MARCH, now: at(21) })).scope).toBe('incremental');
    expect(await stored()).toBe(0);
    // As a crash leaves them: empty. The next run matches and finds what a full run finds.
    await reconcileWithoutDays({ ...MARCH, now: at(22) });
    expect(await stored()).toBe(2);
    await sql`truncate recon_work.matched_ranges, recon_work.matched_range_findings`.execute(h.db);
    expect((await reconcileWithoutDays({ ...MARCH, now: at(23) })).matching).toBe('matched');
    expect(await keys()).toEqual(['amount_mismatch:T-AMT', 'missing_at_provider:M-GONE']);
    expect((await reconcileWithoutDays({ ...MARCH, now: at(24) })).matching).toBe('reused');
  });

  it('folds the change log without losing a change, and only another range than the stored one matches', async () => {
    await sql`insert into recon_work.data_changes (weight) select 1 from generate_series(1, 10001)`.execute(
      h.db,
    );
    expect((await reconcileWithoutDays({ ...MARCH, now: at(20) })).matching).toBe('matched');
    // One row per account left: the loads' (every account, null) and this run's claims (default).
    const rows = await sql<{ account: string | null; n: number }>`select account, count(*)::int as n
      from recon_work.data_changes group by account order by account nulls first`.execute(h.db);
    expect(rows.rows).toEqual([
      { account: null, n: 1 },
      { account: 'default', n: 1 },
    ]);
    expect((await reconcileWithoutDays({ ...MARCH, now: at(21) })).matching).toBe('reused');
    expect((await reconcileWithoutDays({ ...MARCH, from: '2026-03-02', now: at(21) })).matching).toBe(
      'matched',
    );
  });

  it('is told by a trigger on every table a run reads, and on none it writes after matching', async () => {
    const r = await sql<{ table: string }>`select tgrelid::regclass::text as table from pg_trigger
      where tgname like '%\_data\_change' order by 1`.execute(h.db);
    // The lifecycle's own tables change on every run; they are written after the matching is stored,
    // and so are the candidates of the open missing items (reconcile/candidates/).
    const lifecycle = [
      'discrepancies',
      'discrepancy_events',
      'discrepancy_totals',
      'reconcile_runs',
      'match_candidates',
    ];
    const read = [...SCOPED.filter((t) => !lifecycle.includes(t)), 'fee_schedule'].sort();
    expect(r.rows.map((x) => x.table)).toEqual(read);
  });
});
