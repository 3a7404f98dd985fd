import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { applySettings } from '../../reconcile/tolerances/apply.ts';
import { previewSettings } from '../../reconcile/tolerances/preview.ts';
import { parseSettingsFile } from '../../reconcile/tolerances/settings-file.ts';
import { writeOffReport, writeOffsCsv } from '../../reconcile/tolerances/write-off-report.ts';
import { loadTolerances } from '../../reconcile/tolerances/index.ts';
import { useTestDatabase } from '../support/database.ts';
import { insertCentsApart } from '../support/tolerance-rows.ts';

// A proposed change of tolerances previewed over the whole history (nothing written), then applied
// as a separate recorded step; the run's write-offs in the month's report (docs/finance.md).

const h = useTestDatabase(3);
const NOW = '2026-03-20T12:00:00Z';

const FILE = JSON.stringify({
  note: 'the bank rounds fees',
  tolerances: [
    { currency: 'CAD', amount_tolerance_cents: 1, date_lag_business_days: 3, write_off_limit_cents: 5 },
  ],
});

async function seed() {
  await insertCentsApart(h.db, {
    transaction: {
      transaction_id: 'T-B1',
      transaction_on: '2026-01-05',
      transaction_at: '2026-01-05T15:00:00Z',
    },
    ledger: { merchant_transaction_id: 'M-T-B1', amount_cents: 1001, booked_at: '2026-01-05T15:00:01Z' },
    feeValidFrom: '2025-01-01',
  });
  await reconcileRange(h.db, { from: '2026-01-01', to: '2026-01-31', now: NOW });
  await reconcileRange(h.db, { from: '2026-03-01', to: '2026-03-20', now: NOW });
  // What people decided: T-A1 fixed in the ledger (it was not: a cent, which the proposal calls
  // equal), T-A9 accepted, T-B1 accepted (the proposal would no longer flag it).
  for (const [key, resolution] of [
    ['amount_mismatch:T-A1', 'fixed_in_ledger'],
    ['amount_mismatch:T-A9', 'accepted'],
    ['amount_mismatch:T-B1', 'accepted'],
  ] as const) {
    await sql`update discrepancies set status = 'resolved', resolved_at = ${NOW}::timestamptz, resolution = ${resolution},
      resolved_by = 'ann' where discrepancy_key = ${key}`.execute(h.db);
  }
}

async function snapshot() {
  const r = await sql<{ s: string }>`select (
      select string_agg(d::text, '|' order by discrepancy_id) from discrepancies d) || '#' ||
      (select count(*) from discrepancy_events) || '#' || (select count(*) from reconcile_runs) || '#' ||
      (select count(*) from write_offs) || '#' || (select count(*) from matching_tolerances) as s`.execute(
    h.db,
  );
  return r.rows[0]!.s;
}

describe('recon rules preview', () => {
  it('shows per kind and currency what would change and the agreement with people, and writes nothing', async () => {
    await seed();
    const before = await snapshot();
    const p = await previewSettings(h.db, parseSettingsFile(FILE, 'proposal.json'), {
      by: 'cli:ann',
      asOf: NOW,
    });
    expect(await snapshot()).toBe(before);
    expect(p.accounts).toEqual([
      {
        account: 'default',
        from: '2026-01-05',
        to: '2026-03-16',
        version: 0,
        proposed: [{ currency: 'CAD', amountCents: 1, dateLagBusinessDays: 3, writeOffLimitCents: 5 }],
      },
    ]);
    expect(p.totals.map((t) => [t.kind, t.currency, t.change, t.count, t.cents])).toEqual([
      ['amount_mismatch', 'CAD', 'agree', 2, 10],
      ['amount_mismatch', 'CAD', 'disagree', 1, 1],
      ['amount_mismatch', 'CAD', 'write_off', 1, 3],
      ['fee_mismatch', 'CAD', 'close', 1, 1],
      ['missing_at_provider', 'CAD', 'close', 1, 1000],
    ]);
    expect(p.items.map((i) => [i.change, i.discrepancy_key, i.resolution])).toEqual([
      ['disagree', 'amount_mismatch:T-B1', 'accepted'],
      ['write_off', 'amount_mismatch:T-A3', null],
      ['close', 'fee_mismatch:fee_vs_schedule:T-F1', null],
      ['close', 'missing_at_provider:M-LATE', null],
      ['agree', 'amount_mismatch:T-A1', 'fixed_in_ledger'],
      ['agree', 'amount_mismatch:T-A9', 'accepted'],
    ]);
    expect(p.itemCount).toBe(6);
    const rec = await h.db.selectFrom('reconcile_settings').selectAll().execute();
    expect(rec).toHaveLength(1);
    expect(rec[0]).toMatchObject({ previewed_by: 'cli:ann', applied_by: null, content_sha256: p.sha256 });
  });

  it('is applied as its own recorded step, only once previewed, and the next run writes off', async () => {
    await expect(
      applySettings(
        h.db,
        parseSettingsFile(FILE.replace('"note":', '"note": "other", "x":'), 'p.json'),
        'cli:ann',
      ),
    ).rejects.toThrow();
    const other = parseSettingsFile(FILE.replace('the bank rounds fees', 'other'), 'p.json');
    await expect(applySettings(h.db, other, 'cli:bob')).rejects.toThrow('never previewed');
    const r = await applySettings(h.db, parseSettingsFile(FILE, 'proposal.json'), 'cli:bob');
    expect(r.versions).toEqual({ default: 1 });
    const t = await loadTolerances(h.db, 'default');
    expect(t.of('CAD')).toEqual({ amountCents: 1, dateLagBusinessDays: 3, writeOffLimitCents: 5 });
    const rec = await h.db.selectFrom('reconcile_settings').selectAll().executeTakeFirstOrThrow();
    expect(rec.applied_by).toBe('cli:bob');
    expect(rec.applied_at).not.toBeNull();
    await expect(applySettings(h.db, parseSettingsFile(FILE, 'proposal.json'), 'cli:bob')).rejects.toThrow(
      'applied already',
    );

    await reconcileRange(h.db, { from: '2026-03-01', to: '2026-03-20', now: NOW });
    const report = await writeOffReport(h.db, { month: '2026-03' });
    expect(report.totals).toEqual([{ currency: 'CAD', count: 1, net_cents: 3, reversals: 0 }]);
    expect(report.lines.map((l) => [l.transaction_id, l.amount_cents, l.kind, l.written_off_by])).toEqual([
      ['T-A3', 3, 'amount_mismatch', 'recon'],
    ]);
    expect(writeOffsCsv(report).split('\r\n')[1]).toMatch(
      /^\d+,2026-03-20T12:00:00Z,default,CAD,3,0\.03,amount_mismatch,2026-03-02,\d+,,T-A3,M-T-A3,"amount_mismatch of 3 cent\(s\) CAD, within the write-off limit of 5 cent\(s\) \(tolerances version 1\)",recon,$/,
    );
    expect((await writeOffReport(h.db, { month: '2026-04' })).lines).toEqual([]);
  });

  it('matches as a dry run: a preview that does not roll itself back fails and writes nothing', async () => {
    const before = await snapshot();
    const claims = async () =>
      (await sql<{ n: number }>`select (select count(*) from transaction_matches)::int as n`.execute(h.db))
        .rows[0]!.n;
    const claimed = await claims();
    await h.db.deleteFrom('transaction_matches').execute();
    let findings = -1;
    await expect(
      reconcileRange(h.db, {
        from: '2026-01-01',
        to: '2026-03-20',
        now: NOW,
        beforeLifecycle: async (ctx) => {
          // The preview's run reads what the rules found, not the claims: they are not written.
          findings = (await sql<{ n: number }>`select count(*)::int as n from findings`.execute(ctx.trx))
            .rows[0]!.n;
          expect(
            (await sql<{ n: number }>`select count(*)::int as n from transaction_matches`.execute(ctx.trx))
              .rows[0]!.n,
          ).toBe(0);
        },
      }),
    ).rejects.toThrow('must throw in beforeLifecycle');
    expect(findings).toBeGreaterThan(0);
    expect(await snapshot()).toBe(before);
    await reconcileRange(h.db, { from: '2026-01-01', to: '2026-03-20', now: NOW, full: true });
    expect(await claims()).toBe(claimed);
  });
});
