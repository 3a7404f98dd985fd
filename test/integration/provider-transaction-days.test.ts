import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseAccountName } from '../../domain/account-name.ts';
import { loadReport } from '../../ingest/load/load-report.ts';
import { overviewRange } from '../../workbench/queries/overview.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  bytesOf,
  fakeParser,
  legacyTransaction,
  legacyType5File,
  legacyType5Request,
  reportRequest,
  transaction,
} from '../support/ingest-records.ts';
import { insertLoad, insertTransactions } from '../support/recon-rows.ts';

// provider_transaction_days (migration 0042) holds exactly the (account, day) pairs that have provider
// transactions, whoever writes them: the workbench overview's span of days is read from it, since
// provider_transactions' index of days is a BRIN index (docs/architecture.md).

const h = useTestDatabase();

beforeEach(async () => {
  // A truncate of provider_transactions empties the days too.
  await sql`truncate provider_transactions, legacy_transactions, discrepancies cascade`.execute(h.db);
});

/** The table's pairs, and the pairs provider_transactions has: they must be the same. */
async function days(): Promise<{ kept: string[]; actual: string[] }> {
  const kept = await sql<{ d: string }>`select account || ' ' || transaction_on as d
    from provider_transaction_days order by 1`.execute(h.db);
  const actual = await sql<{ d: string }>`select distinct account || ' ' || transaction_on as d
    from provider_transactions where transaction_on is not null order by 1`.execute(h.db);
  return { kept: kept.rows.map((r) => r.d), actual: actual.rows.map((r) => r.d) };
}

const legacyFile = (rows: readonly [number, string][]) =>
  legacyType5File(
    rows.map(([i, on]) =>
      legacyTransaction({
        transaction_id: `L${i}`,
        merchant_transaction_id: `LM${i}`,
        transaction_on: on,
        transaction_at: `${on}T15:00:00Z`,
        amount_cents: 300 + i,
      }),
    ),
  );

const legacyLoad = (file: ReturnType<typeof bytesOf>) =>
  loadReport(h, legacyType5Request({ batchRows: 2 }), file);

describe('provider_transaction_days', () => {
  it("a legacy load's COPYs note their days, and a restated row moved to another day moves its day", async () => {
    const first = await legacyLoad(
      legacyFile([
        [1, '2026-03-02'],
        [2, '2026-03-02'],
        [3, '2026-03-04'],
        [4, '2026-03-05'],
      ]),
    );
    expect(first).toMatchObject({ rowsInserted: 4 });
    expect(await days()).toEqual({
      kept: ['default 2026-03-02', 'default 2026-03-04', 'default 2026-03-05'],
      actual: ['default 2026-03-02', 'default 2026-03-04', 'default 2026-03-05'],
    });
    // L4 restated on another day (the merge, through the triggers): 2026-03-05 has no row left.
    const second = await legacyLoad(
      legacyFile([
        [4, '2026-03-07'],
        [5, '2026-03-09'],
      ]),
    );
    expect(second.rowsUpdated).toBe(1);
    const after = await days();
    expect(after.kept).toEqual(after.actual);
    expect(after.kept).toEqual([
      'default 2026-03-02',
      'default 2026-03-04',
      'default 2026-03-07',
      'default 2026-03-09',
    ]);
  });

  it('a report load, direct writes, updates and deletes keep it exact, per account', async () => {
    const records = [
      transaction({ transaction_id: 'T1', merchant_transaction_id: 'M1', transaction_on: '2026-04-01' }),
      transaction({ transaction_id: 'T2', merchant_transaction_id: 'M2', transaction_on: '2026-04-03' }),
    ];
    await loadReport(h, reportRequest({ batchRows: 1 }), bytesOf('x'), fakeParser(records));
    const load = await insertLoad(h.db, 'report-transactions');
    await insertTransactions(h.db, load, [
      { transaction_id: 'T3', transaction_on: '2026-04-03', transaction_at: '2026-04-03T15:00:00Z' },
      { transaction_id: 'T4', transaction_on: '2026-04-06', transaction_at: '2026-04-06T15:00:00Z' },
    ]);
    await sql`update provider_transactions set account = 'acme' where transaction_id = 'T4'`.execute(h.db);
    expect((await days()).kept).toEqual(['acme 2026-04-06', 'default 2026-04-01', 'default 2026-04-03']);
    // T2 leaves 2026-04-03, where T3 stays; T1 leaves 2026-04-01, which empties it.
    await sql`update provider_transactions set transaction_on = '2026-04-08' where transaction_id in ('T1', 'T2')`.execute(
      h.db,
    );
    expect((await days()).kept).toEqual(['acme 2026-04-06', 'default 2026-04-03', 'default 2026-04-08']);
    await sql`delete from provider_transactions where transaction_id in ('T3', 'T4')`.execute(h.db);
    const after = await days();
    expect(after.kept).toEqual(['default 2026-04-08']);
    expect(after.kept).toEqual(after.actual);
    await sql`truncate provider_transactions`.execute(h.db);
    expect(await days()).toEqual({ kept: [], actual: [] });
  });

  it('a load that fails leaves no day behind', async () => {
    const broken = [
      transaction({ transaction_id: 'T1', merchant_transaction_id: 'M1', transaction_on: '2026-05-01' }),
      new Error('the connection dropped'),
    ];
    await expect(
      loadReport(h, reportRequest({ batchRows: 1 }), bytesOf('x'), fakeParser(broken)),
    ).rejects.toThrow();
    expect(await days()).toEqual({ kept: [], actual: [] });
  });

  it("the workbench overview's span of days comes from it", async () => {
    await legacyLoad(
      legacyFile([
        [1, '2026-02-10'],
        [2, '2026-02-20'],
      ]),
    );
    expect(await overviewRange(h.db, {}, '2026-11-27', 'all')).toEqual({
      from: '2026-02-10',
      to: '2026-02-20',
    });
    expect(await overviewRange(h.db, {}, '2026-11-27', [parseAccountName('acme')])).toEqual({
      from: '2026-08-30',
      to: '2026-11-27',
    });
  });
});
