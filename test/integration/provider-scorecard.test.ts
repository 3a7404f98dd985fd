import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { loadReport } from '../../ingest/load/load-report.ts';
import { useTestDatabase } from '../support/database.ts';
import { notificationBody } from '../support/notification-body.ts';
import { insertLoad, insertReturns, storeTestNotification } from '../support/recon-rows.ts';

/**
 * The analyst view provider_scorecard (migrations 0021 and 0030), against real PostgreSQL: for 2026-03-10
 * (Eastern daylight time, so the day ends at 2026-03-11T04:00Z), how late each source's data
 * arrived, how late notifications came, and the rows present in one source and not in its sibling.
 */
const h = useTestDatabase();
const HEADER =
  'Transaction Date,Transaction Type,Merchant Transaction ID,Transaction ID,Transaction Amount,Currency,Transaction Status,Internal User ID,Transaction Fee,Merchant ID,Request Type,Payment Method,Merchant User ID,Error Code,Error Description,Country,Device Type,External Reference,Product,Payment Notification Status,Payment Region';
const reportLine = (id: string, at: string) =>
  `${at},DEBIT,ORD-${id},${id},12550,CAD,SUCCESSFUL,PU-1,125,10001,Interactive,EFT,player-1,,,CA,DESKTOP,EXT-${id},IBT,C,ON`;
const legacyLine = (id: string) =>
  `20260310,D,ORD-${id},${id},0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-1,100000,CA,,`;
const WINDOW = { start: '2026-03-10T04:00:00Z', end: '2026-03-11T04:00:00Z' };

beforeAll(async () => {
  // The report holds R1, R2 and BOTH; the legacy interface BOTH and L1 (the e-transfer product).
  const report = await loadReport(
    h,
    {
      source: 'report-transactions',
      format: 'report-csv',
      queryType: 'TRANSACTION',
      fileName: 'r.csv',
      origin: 'pull',
      environment: 'staging',
      window: WINDOW,
    },
    Readable.from([
      Buffer.from(
        [
          HEADER,
          reportLine('R1', '2026-03-10T14:00:00Z'),
          reportLine('R2', '2026-03-10T15:00:00Z'),
          reportLine('BOTH', '2026-03-10T14:00:00Z'),
        ].join('\n') + '\n',
      ),
    ]),
  );
  const legacy = await loadReport(
    h,
    {
      source: 'legacy-transactions',
      format: 'legacy',
      queryType: '5',
      fileName: 'l.csv',
      origin: 'pull',
      environment: 'staging',
      window: WINDOW,
    },
    Readable.from([Buffer.from(`${legacyLine('BOTH')}\n${legacyLine('L1')}\n`)]),
  );
  // The report was first pulled 6 hours after the day ended, the legacy file 30 hours after.
  await sql`update loads set finished_at = '2026-03-11T10:00:00Z' where load_id = ${report.loadId}`.execute(
    h.db,
  );
  await sql`update loads set finished_at = '2026-03-12T10:00:00Z' where load_id = ${legacy.loadId}`.execute(
    h.db,
  );
  // R1 notified after 60 s (and again later), BOTH after 600 s, X (unknown to the provider) on the day.
  const lines = [
    { kind: 'transaction', received_at: '2026-03-10T14:01:00Z', payload: notificationBody('R1') },
    {
      kind: 'transaction',
      received_at: '2026-03-10T18:00:00Z',
      payload: notificationBody('R1', { transaction: { transactionStatus: 'FAILED' } }),
    },
    { kind: 'transaction', received_at: '2026-03-10T14:10:00Z', payload: notificationBody('BOTH') },
    { kind: 'transaction', received_at: '2026-03-10T16:00:00Z', payload: notificationBody('X') },
  ];
  await importNotificationHistory(
    h.db,
    Readable.from([lines.map((l) => JSON.stringify(l)).join('\n') + '\n']),
  );
});

describe('provider_scorecard', () => {
  it('says how late each source arrived, how late notifications came, and what one source has that its sibling lacks', async () => {
    const rows = await sql<Record<string, unknown>>`select source, rows, first_load_id is not null as held,
        first_covered_at is not null as covered, arrival_delay_seconds, notification_delay_p50_seconds,
        notification_delay_p95_seconds, sibling_source, rows_not_in_sibling, rows_not_notified
      from provider_scorecard where account = 'default' and business_date = '2026-03-10'
      order by source`.execute(h.db);
    expect(rows.rows).toEqual([
      {
        source: 'legacy-transactions',
        rows: 2,
        held: true,
        covered: true,
        arrival_delay_seconds: 30 * 3600,
        notification_delay_p50_seconds: null,
        notification_delay_p95_seconds: null,
        sibling_source: 'report-transactions',
        rows_not_in_sibling: 1,
        rows_not_notified: null,
      },
      {
        source: 'notifications',
        rows: 3,
        held: false,
        covered: false,
        arrival_delay_seconds: null,
        notification_delay_p50_seconds: 60,
        notification_delay_p95_seconds: 600,
        sibling_source: 'report-transactions',
        rows_not_in_sibling: 1,
        rows_not_notified: null,
      },
      {
        source: 'report-transactions',
        rows: 3,
        held: true,
        covered: true,
        arrival_delay_seconds: 6 * 3600,
        notification_delay_p50_seconds: null,
        notification_delay_p95_seconds: null,
        sibling_source: 'legacy-transactions',
        rows_not_in_sibling: 2,
        rows_not_notified: 1,
      },
    ]);
  });

  it('lists a covered day without rows, so that a quiet day shows as covered and empty', async () => {
    await loadReport(
      h,
      {
        source: 'legacy-returns',
        format: 'legacy',
        queryType: '1',
        fileName: 'ret.csv',
        origin: 'pull',
        environment: 'staging',
        window: WINDOW,
      },
      Readable.from([Buffer.from('')]),
    );
    const r = await sql<{ rows: number; covered: boolean; arrival_delay_seconds: number | null }>`
      select rows, first_covered_at is not null as covered, arrival_delay_seconds from provider_scorecard
      where source = 'legacy-returns' and business_date = '2026-03-10'`.execute(h.db);
    expect(r.rows).toEqual([{ rows: 0, covered: true, arrival_delay_seconds: null }]);
  });

  it('compares the return report with the return notifications, both ways (migration 0030)', async () => {
    const load = await insertLoad(h.db, 'report-returns');
    // RET1 notified by its own id, RET2 by its original's (ORIG2), RET3 never: one report return not notified.
    await insertReturns(h.db, load, [
      { return_transaction_id: 'RET1', original_transaction_id: 'ORIG1', returned_on: '2026-03-10' },
      { return_transaction_id: 'RET2', original_transaction_id: 'ORIG2', returned_on: '2026-03-10' },
      { return_transaction_id: 'RET3', original_transaction_id: 'ORIG3', returned_on: '2026-03-10' },
    ]);
    // Received on March 10, Eastern: RET1 (twice: one transaction id), ORIG2, and RET9 no report lists.
    const at = [
      '2026-03-10T15:00:00Z',
      '2026-03-10T16:00:00Z',
      '2026-03-10T17:00:00Z',
      '2026-03-10T18:00:00Z',
    ];
    const ids = ['RET1', 'RET1', 'ORIG2', 'RET9'];
    for (const [i, id] of ids.entries()) {
      await storeTestNotification(h.db, id, `ORD-${id}`, { transactionStatus: 'RETURNED' }, at[i], 'return');
    }
    const r = await sql<Record<string, unknown>>`select source, rows, sibling_source, rows_not_in_sibling
      from provider_scorecard where business_date = '2026-03-10'
        and source in ('report-returns', 'return-notifications') order by source`.execute(h.db);
    expect(r.rows).toEqual([
      { source: 'report-returns', rows: 3, sibling_source: 'return-notifications', rows_not_in_sibling: 1 },
      { source: 'return-notifications', rows: 3, sibling_source: 'report-returns', rows_not_in_sibling: 1 },
    ]);
  });

  it('is readable by recon_analyst', async () => {
    const n = await h.db.connection().execute(async (conn) => {
      await sql`set role recon_analyst`.execute(conn);
      try {
        return await sql<{ n: number }>`select count(*)::int as n from provider_scorecard`.execute(conn);
      } finally {
        await sql`reset role`.execute(conn);
      }
    });
    expect(n.rows[0]!.n).toBeGreaterThan(0);
  });
});
