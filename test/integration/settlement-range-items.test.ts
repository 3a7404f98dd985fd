import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createMigrator } from '../../db/migrate.ts';
import { KEPT_COLUMNS, KEPT_SHAPE } from '../../reconcile/rules/settlement-kept-keys.ts';
import { dropAnalystLogin } from '../support/limited-analyst.ts';
import { insertLedger } from '../support/recon-rows.ts';
import { createOddSettlementWarehouse, ODD_RANGE } from '../support/settlement-odd-rows.ts';

/**
 * Migration 0043: settlement_items takes the ledger's paired and unpaired payments from one view of
 * each entry, and recon_work.settlement_range_items, which a full run's roll-forward reads
 * (reconcile/rules/settlement.ts), reads each ledger payment once. Both have the rows settlement_items
 * had before, on two accounts of sandbox history with the odd rows (unknown type, pending, a re-debit,
 * unpaired entries) and a claim whose provider row is gone; the down migration gives the view back.
 */

let h: DatabaseHandle;
const LOGIN = `ana_range_${process.pid}`;
const MIGRATION = '0043_settlement_ledger_payments_once';
const BEFORE = '0042_provider_indexes_cheaper_forms';
const RANGE = ODD_RANGE;

beforeAll(async () => {
  h = await createOddSettlementWarehouse(4343, LOGIN);
});
afterAll(async () => {
  await dropAnalystLogin(h.db, LOGIN);
  await h?.close();
});

/** The rows of `relation` between two days (every day when none), as sorted text. */
async function items(relation: string, days?: [string, string]): Promise<string[]> {
  const where = days ? sql`where business_date between ${days[0]}::date and ${days[1]}::date` : sql``;
  const r = await sql<{ r: string }>`select r::text as r from ${sql.raw(relation)} r ${where}
    order by r::text`.execute(h.db);
  return r.rows.map((x) => x.r);
}

async function plan(relation: string): Promise<string> {
  const r = await sql<{ 'QUERY PLAN': string }>`explain select * from ${sql.raw(relation)}
    where business_date between ${RANGE.from}::date and ${RANGE.to}::date`.execute(h.db);
  return r.rows.map((x) => x['QUERY PLAN']).join('\n');
}

const matchReads = (text: string) => text.split('on transaction_matches').length - 1;

describe('settlement_range_items (migration 0043)', () => {
  it("is what a full run kept: the view's items of its range and account", async () => {
    const kept = await sql<{ r: string }>`select r::text as r from recon_work.settlement_kept_items r
      order by r::text`.execute(h.db);
    // A kept item is settlement_items' row as KEPT_COLUMNS gives it (migration 0057).
    const view = await sql<{ r: string }>`select r::text as r
      from (select ${sql.raw(KEPT_COLUMNS)} from settlement_items i) r
      where account = 'us-main' and business_date between ${RANGE.from}::date and ${RANGE.to}::date
      order by r::text`.execute(h.db);
    expect(view.rows.length).toBeGreaterThan(100);
    expect(kept.rows).toEqual(view.rows);
    // The shape a run over changed keys asks of the kept table before it reads it (keptTableFits).
    const shape = await sql<{ c: string }>`select attname::text || ' ' || atttypid::regtype::text as c
      from pg_attribute where attrelid = 'recon_work.settlement_kept_items'::regclass and attnum > 0
        and not attisdropped order by attnum`.execute(h.db);
    expect(shape.rows.map((x) => x.c)).toEqual(KEPT_SHAPE);
  });

  it("has settlement_items' rows, for every day and for a few, a claim whose provider row is gone among them", async () => {
    // A ledger entry claimed by a provider row that is no longer there: unpaired, under the claim's pair key.
    await insertLedger(h.db, [
      { account: 'ca-main', merchant_transaction_id: 'L-claim-gone', booked_at: '2026-12-28T17:00:00Z' },
    ]);
    await sql`insert into transaction_matches (account, transaction_id, merchant_transaction_id, rule)
      values ('ca-main', 'T-gone', 'L-claim-gone', 'merchant_transaction_id')`.execute(h.db);
    const all = await items('settlement_items');
    expect(await items('recon_work.settlement_range_items')).toEqual(all);
    for (const days of [
      [RANGE.from, RANGE.to],
      ['2026-12-28', '2026-12-28'],
      ['2026-12-29', '2027-01-02'],
    ] as const)
      expect(await items('recon_work.settlement_range_items', [...days])).toEqual(
        await items('settlement_items', [...days]),
      );
    const kinds = new Set(
      all.map((r) =>
        r
          .split(',')
          .slice(3, 6)
          .join(' ')
          .replace(/:[^ ]*/, ''),
      ),
    );
    for (const kind of ['T ledger payin', 'T ledger payout', 'L ledger payin', 'T ledger unknown_type'])
      expect(kinds).toContain(kind);
    expect(all.some((r) => r.includes('T:T-gone,ledger,unknown_type'))).toBe(true);
  });

  it('reads the claims once where settlement_items reads them for the paired and the unpaired entries apart', async () => {
    expect(matchReads(await plan('settlement_items'))).toBe(2);
    expect(matchReads(await plan('recon_work.settlement_range_items'))).toBe(1);
  });

  it('leaves settlement_items the rows it had; its down migration gives the view back', async () => {
    const snapshot = async () => ({
      pipeline: await items('settlement_items'),
      totals: await items('daily_settlement_totals'),
      analyst: await h.db.connection().execute(async (conn) => {
        await sql`set role ${sql.id(LOGIN)}`.execute(conn);
        try {
          const r = await sql<{
            r: string;
          }>`select r::text as r from settlement_items r order by r::text`.execute(conn);
          return r.rows.map((x) => x.r);
        } finally {
          await sql`reset role`.execute(conn);
        }
      }),
    });
    const after = await snapshot();
    expect(after.analyst.length).toBeGreaterThan(100);
    expect(after.analyst.every((r) => r.startsWith('(ca-main,'))).toBe(true);
    const migrator = createMigrator(h.db);
    const down = await migrator.migrateTo(BEFORE);
    expect(down.error).toBeUndefined();
    expect(down.results?.map((r) => r.migrationName).at(-1)).toBe(MIGRATION);
    const gone = await sql<{
      ok: boolean;
    }>`select to_regclass('recon_work.settlement_range_items') is null as ok`.execute(h.db);
    expect(gone.rows[0]!.ok).toBe(true);
    expect(matchReads(await plan('settlement_items'))).toBe(2);
    expect(await snapshot()).toEqual(after);
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(await snapshot()).toEqual(after);
  });
});
