import { readdir } from 'node:fs/promises';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createMigrator } from '../../db/migrate.ts';
import { MIGRATIONS_DIR } from '../../db/schema-state.ts';
import {
  EXACT,
  InvalidTolerance,
  loadTolerances,
  recordWriteOff,
  setTolerances,
  toleranceHistory,
} from '../../reconcile/tolerances/index.ts';
import { useTestDatabase } from '../support/database.ts';

// Tolerances per account and currency, versioned (migration 0026), and the write-offs list.

const h = useTestDatabase(2);

describe('tolerances', () => {
  it('are exact (version 0, all zero) for an account that never had any', async () => {
    const t = await loadTolerances(h.db, 'default');
    expect(t.version).toBe(0);
    expect(t.of('CAD')).toEqual(EXACT);
    expect(t.currencies).toEqual([]);
  });

  it('take the next version per account on each change; other currencies keep theirs', async () => {
    const v1 = await setTolerances(h.db, {
      account: 'ca-main',
      changes: [{ currency: 'CAD', amountCents: 1, dateLagBusinessDays: 2, writeOffLimitCents: 5 }],
      setBy: 'cli:ann',
      note: 'fees rounded by the bank',
    });
    const v2 = await setTolerances(h.db, {
      account: 'ca-main',
      changes: [{ currency: 'USD', amountCents: 0, dateLagBusinessDays: 0, writeOffLimitCents: 3 }],
      setBy: 'cli:bob',
    });
    expect([v1, v2]).toEqual([1, 2]);
    const now = await loadTolerances(h.db, 'ca-main');
    expect(now.version).toBe(2);
    expect(now.of('CAD')).toEqual({ amountCents: 1, dateLagBusinessDays: 2, writeOffLimitCents: 5 });
    expect(now.of('USD')).toEqual({ amountCents: 0, dateLagBusinessDays: 0, writeOffLimitCents: 3 });
    expect(now.of('EUR')).toEqual(EXACT);
    const then = await loadTolerances(h.db, 'ca-main', 1);
    expect(then.version).toBe(1);
    expect(then.of('USD')).toEqual(EXACT);
    // Another account is untouched.
    expect((await loadTolerances(h.db, 'default')).version).toBe(0);
    const history = await toleranceHistory(h.db, 'ca-main');
    expect(history.map((r) => [r.version, r.currency, r.set_by])).toEqual([
      [2, 'USD', 'cli:bob'],
      [1, 'CAD', 'cli:ann'],
    ]);
  });

  it('refuses what cannot be a tolerance, naming it', async () => {
    const set = (c: {
      currency: string;
      amountCents: number;
      dateLagBusinessDays: number;
      writeOffLimitCents: number;
    }) => setTolerances(h.db, { account: 'default', changes: [c], setBy: 'cli:ann' });
    await expect(
      set({ currency: 'CAD', amountCents: -1, dateLagBusinessDays: 0, writeOffLimitCents: 0 }),
    ).rejects.toThrow('CAD amount tolerance (cents) -1: use a whole number, 0 or more');
    await expect(
      set({ currency: 'CAD', amountCents: 2, dateLagBusinessDays: 0, writeOffLimitCents: 2 }),
    ).rejects.toThrow(InvalidTolerance);
    await expect(
      set({ currency: 'cad', amountCents: 0, dateLagBusinessDays: 0, writeOffLimitCents: 0 }),
    ).rejects.toThrow('use three uppercase letters');
    expect((await loadTolerances(h.db, 'default')).version).toBe(0);
  });

  it('are never updated or deleted: a change is a new version', async () => {
    await expect(
      sql`update matching_tolerances set amount_tolerance_cents = 9`.execute(h.db),
    ).rejects.toThrow('matching_tolerances is insert-only');
    await expect(sql`delete from matching_tolerances`.execute(h.db)).rejects.toThrow('insert-only');
  });
});

describe('write-offs', () => {
  it('are recorded with their reason; a discrepancy can be resolved as written_off', async () => {
    const d = await sql<{
      id: number;
    }>`insert into discrepancies (discrepancy_key, kind, rule, transaction_id,
        business_date, currency, expected_amount_cents, actual_amount_cents, difference_cents)
      values ('fee_mismatch:T1', 'fee_mismatch', 'fee_vs_schedule', 'T1', '2026-04-01', 'CAD', 150, 151, 1)
      returning discrepancy_id::int as id`.execute(h.db);
    const id = d.rows[0]!.id;
    const wid = await h.db.transaction().execute(async (trx) => {
      await sql`update discrepancies set status = 'resolved', resolved_at = now(), resolution = 'written_off',
        resolved_by = 'recon' where discrepancy_id = ${id}`.execute(trx);
      return recordWriteOff(trx, {
        account: 'default',
        currency: 'CAD',
        amountCents: 1,
        reason: 'fee one cent over the schedule, within the write-off limit of 5',
        kind: 'fee_mismatch',
        businessDate: '2026-04-01',
        discrepancyId: id,
        writtenOffBy: 'recon',
      });
    });
    const rows = await h.db.selectFrom('write_offs').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      write_off_id: wid,
      amount_cents: 1,
      currency: 'CAD',
      discrepancy_id: id,
    });
    await expect(
      recordWriteOff(h.db, {
        account: 'default',
        currency: 'CAD',
        amountCents: 1,
        reason: ' ',
        writtenOffBy: 'x',
      }),
    ).rejects.toThrow('a write-off needs a reason');
    await expect(sql`update write_offs set amount_cents = 2`.execute(h.db)).rejects.toThrow('insert-only');
  });
});

describe('migration 0026', () => {
  it('undoes cleanly and applies again', async () => {
    const names = (await readdir(MIGRATIONS_DIR))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3))
      .sort();
    const mine = names.indexOf('0026_tolerances_and_write_offs');
    const migrator = createMigrator(h.db);
    expect((await migrator.migrateTo(names[mine - 1]!)).error).toBeUndefined();
    const left = await sql<{ n: number }>`select count(*)::int as n from pg_tables
      where tablename in ('matching_tolerances','write_offs','reconcile_settings')`.execute(h.db);
    expect(left.rows[0]!.n).toBe(0);
    expect((await sql<{ r: string }>`select resolution as r from discrepancies`.execute(h.db)).rows).toEqual([
      { r: 'accepted' },
    ]);
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
  });
});
