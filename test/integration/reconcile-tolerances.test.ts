import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { setTolerances } from '../../reconcile/tolerances/index.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertCentsApart } from '../support/tolerance-rows.ts';

// The rules with an account's tolerances (docs/finance.md, "Tolerances and write-offs"): a difference
// within the amount tolerance is equal, one within the write-off limit is written off by the run,
// the date lag lengthens the grace period; all zero matches exactly.

const h = useTestDatabase(3);
const NOW = '2026-03-20T12:00:00Z';
const RANGE = { from: '2026-03-02', to: '2026-03-20', now: NOW };

function seed() {
  return insertCentsApart(h.db, {
    transaction: { transaction_id: 'T-U1', currency: 'USD' },
    ledger: { merchant_transaction_id: 'M-T-U1', amount_cents: 1001, currency: 'USD' },
    feeValidFrom: '2026-01-01',
  });
}

async function state() {
  const r = await sql<{ key: string; status: string; resolution: string | null; resolved_by: string | null }>`
    select discrepancy_key as key, status, resolution, resolved_by from discrepancies
    where kind not like 'notification%' order by 1`.execute(h.db);
  return Object.fromEntries(r.rows.map((x) => [x.key, [x.status, x.resolution, x.resolved_by]]));
}

async function writeOffs() {
  const r = await sql<{ key: string; amount_cents: string; reversal: boolean; by: string; version: string }>`
    select d.discrepancy_key as key, w.amount_cents::text, w.reversal_of is not null as reversal,
      w.written_off_by as by, w.tolerance_version::text as version
    from write_offs w join discrepancies d using (discrepancy_id) order by w.write_off_id`.execute(h.db);
  return r.rows.map((x) => [x.key, Number(x.amount_cents), x.reversal, x.by, Number(x.version)]);
}

describe('tolerances in the rules', () => {
  it('all zero: every cent and every day counts, as without tolerances', async () => {
    await seed();
    const s = await reconcileRange(h.db, RANGE);
    expect(s.toleranceVersion).toBe(0);
    expect(s.writeOffs).toEqual({ writtenOff: 0, reopened: 0, fixed: 0 });
    expect(await state()).toEqual({
      'amount_mismatch:T-A1': ['open', null, null],
      'amount_mismatch:T-A3': ['open', null, null],
      'amount_mismatch:T-A9': ['open', null, null],
      'amount_mismatch:T-U1': ['open', null, null],
      'fee_mismatch:fee_vs_schedule:T-F1': ['open', null, null],
      'missing_at_provider:M-LATE': ['open', null, null],
    });
  });

  it('a new version: within the tolerance is equal, within the limit written off, the lag waits', async () => {
    await setTolerances(h.db, {
      account: 'default',
      changes: [{ currency: 'CAD', amountCents: 1, dateLagBusinessDays: 3, writeOffLimitCents: 5 }],
      setBy: 'cli:ann',
    });
    const s = await reconcileRange(h.db, RANGE);
    // Same data, other tolerances: matched again, not the last matching reused.
    expect(s.matching).toBe('matched');
    expect(s.toleranceVersion).toBe(1);
    expect(s.writeOffs).toEqual({ writtenOff: 1, reopened: 0, fixed: 0 });
    expect(await state()).toEqual({
      'amount_mismatch:T-A1': ['resolved', null, null],
      'amount_mismatch:T-A3': ['resolved', 'written_off', 'recon'],
      'amount_mismatch:T-A9': ['open', null, null],
      'amount_mismatch:T-U1': ['open', null, null],
      'fee_mismatch:fee_vs_schedule:T-F1': ['resolved', null, null],
      'missing_at_provider:M-LATE': ['resolved', null, null],
    });
    expect(await writeOffs()).toEqual([['amount_mismatch:T-A3', 3, false, 'recon', 1]]);
    const run = await sql<{ settings: { tolerances: { version: number; currencies: unknown[] } } }>`
      select settings from reconcile_runs order by run_id desc limit 1`.execute(h.db);
    expect(run.rows[0]!.settings.tolerances).toEqual({
      version: 1,
      currencies: [
        {
          currency: 'CAD',
          amountCents: 1,
          dateLagBusinessDays: 3,
          writeOffLimitCents: 5,
          dueThrough: '2026-03-15',
        },
      ],
    });
    const events = await sql<{ event: string; details: { resolution: string; reason: string } }>`
      select e.event, e.details from discrepancy_events e join discrepancies d using (discrepancy_id)
      where d.discrepancy_key = 'amount_mismatch:T-A3' order by e.event_id`.execute(h.db);
    expect(events.rows.map((e) => e.event)).toEqual(['opened', 'resolved']);
    expect(events.rows[1]!.details.reason).toBe(
      'amount_mismatch of 3 cent(s) CAD, within the write-off limit of 5 cent(s) (tolerances version 1)',
    );
  });

  it('a re-run writes nothing off twice', async () => {
    const s = await reconcileRange(h.db, RANGE);
    expect(s.writeOffs).toEqual({ writtenOff: 0, reopened: 0, fixed: 0 });
    expect((await state())['amount_mismatch:T-A3']).toEqual(['resolved', 'written_off', 'recon']);
    expect(await writeOffs()).toHaveLength(1);
  });

  it('a difference grown beyond the limit reopens the item and reverses its write-off', async () => {
    await sql`update merchant_ledger set amount_cents = 1008 where merchant_transaction_id = 'M-T-A3'`.execute(
      h.db,
    );
    const s = await reconcileRange(h.db, RANGE);
    expect(s.writeOffs).toEqual({ writtenOff: 0, reopened: 1, fixed: 0 });
    expect((await state())['amount_mismatch:T-A3']).toEqual(['open', null, null]);
    expect(await writeOffs()).toEqual([
      ['amount_mismatch:T-A3', 3, false, 'recon', 1],
      ['amount_mismatch:T-A3', -3, true, 'recon', 1],
    ]);
    // A higher limit writes the new difference off (and not T-A9's 9 cents).
    await setTolerances(h.db, {
      account: 'default',
      changes: [{ currency: 'CAD', amountCents: 1, dateLagBusinessDays: 3, writeOffLimitCents: 8 }],
      setBy: 'cli:ann',
    });
    expect((await reconcileRange(h.db, RANGE)).writeOffs).toEqual({ writtenOff: 1, reopened: 0, fixed: 0 });
    expect((await writeOffs()).at(-1)).toEqual(['amount_mismatch:T-A3', 8, false, 'recon', 2]);
  });

  it('a difference gone (the ledger corrected) reverses the write-off and resolves the item as fixed', async () => {
    // T-A3 is written off at 8 cents (version 2); the ledger is corrected to the provider's amount.
    await sql`update merchant_ledger set amount_cents = 1000 where merchant_transaction_id = 'M-T-A3'`.execute(
      h.db,
    );
    const s = await reconcileRange(h.db, RANGE);
    expect(s.writeOffs).toEqual({ writtenOff: 0, reopened: 0, fixed: 1 });
    expect((await state())['amount_mismatch:T-A3']).toEqual(['resolved', null, null]);
    expect((await writeOffs()).slice(-2)).toEqual([
      ['amount_mismatch:T-A3', 8, false, 'recon', 2],
      ['amount_mismatch:T-A3', -8, true, 'recon', 2],
    ]);
    const net = await sql<{ n: string }>`select sum(amount_cents)::text as n from write_offs`.execute(h.db);
    expect(Number(net.rows[0]!.n)).toBe(0);
    const last = await sql<{ event: string; reason: string }>`
      select e.event, e.details->>'reason' as reason from discrepancy_events e join discrepancies d using (discrepancy_id)
      where d.discrepancy_key = 'amount_mismatch:T-A3' order by e.event_id desc limit 1`.execute(h.db);
    expect(last.rows[0]).toEqual({
      event: 'resolved',
      reason:
        'amount_mismatch no longer found: the difference is gone, its write-off of 8 cent(s) CAD reversed',
    });
    // Nothing more on the next run.
    expect((await reconcileRange(h.db, RANGE)).writeOffs).toEqual({ writtenOff: 0, reopened: 0, fixed: 0 });
    expect(await writeOffs()).toHaveLength(4);
  });
});
