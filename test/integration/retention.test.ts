import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { PERSONAL_MARK as M } from '../../domain/privacy.ts';
import { clearPersonalData } from '../../db/retention.ts';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon as runRecon } from '../support/recon-process.ts';

// `recon retention`: personal data leaves raw lines, payloads, refused bodies and history after N
// days; business columns stay; a second run clears nothing; recent rows are untouched.

const OLD = 'old.person@plant-retention.example';
const NEW = 'new.person@plant-retention.example';
const ACCOUNT = '481-20375-****8642';
const TOKEN = 'TOKretain7f3a9c2e41';
const text = (content: string) => Readable.from([Buffer.from(content)]);
const legacy: LoadRequest = {
  source: 'legacy-transactions',
  format: 'legacy',
  queryType: '5',
  fileName: 'legacy5.csv',
  origin: 'file',
  environment: 'staging',
};
const line = (id: string, status: string, email: string) =>
  `20260310,D,ORD-${id},${id},0000012550,CAD,${status},IU1,0000000125,MERCH001,,C,player-1,101500,CA,${email},${ACCOUNT}`;
const OLD_FILE = `${line('ET1', 'S', OLD)}\n${line('ET2', 'S', OLD)}\n${OLD},bad line\n`;

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
  await loadReport(h, legacy, text(OLD_FILE));
  await loadReport(h, legacy, text(`${line('ET2', 'F', OLD)}\n`)); // a restatement: row_history
  await importNotificationHistory(
    h.db,
    text(
      `${JSON.stringify({
        kind: 'transaction',
        received_at: '2026-03-10T15:00:05Z',
        payload: {
          merchant: { merchantId: 'M1', merchantTransactionId: 'ORD-ET1', merchantUserId: 'user-1' },
          accountInfo: { accountToken: TOKEN, accountLabel: '****8642' },
          transaction: {
            transactionId: 'ET1',
            transactionType: 'DEBIT',
            transactionStatus: 'SUCCESS',
            transactionAmount: 12550,
            currencyCode: 'CAD',
          },
        },
      })}\n${OLD} ${TOKEN}\n`,
    ),
  );
  await sql`insert into status_lookups (transaction_id, raw_status, response, looked_up_at)
    values ('ET1', 'SUCCESS', ${JSON.stringify({ account: { accountMask: '****8642', bankName: 'Maple Bank' } })}::jsonb, '2026-03-01T00:00:00Z')`.execute(
    h.db,
  );
  // Everything so far is 100 days old; then one recent row.
  const longAgo = '2026-01-01T00:00:00Z';
  for (const [table, column] of [
    ['legacy_transactions', 'updated_at'],
    ['provider_transactions', 'updated_at'],
    ['row_history', 'changed_at'],
    ['rejected_rows', 'created_at'],
    ['notifications', 'last_received_at'],
    ['notification_quarantine', 'received_at'],
  ] as const) {
    await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${longAgo}`.execute(h.db);
  }
  await loadReport(h, { ...legacy, fileName: 'recent.csv' }, text(`${line('ET3', 'S', NEW)}\n`));
});
afterAll(async () => h?.close());

const NOW = '2026-04-10T00:00:00Z';

async function personalText(): Promise<string> {
  const r = await sql<{ t: string }>`select concat_ws(' | ',
      (select string_agg(raw, ' ') from legacy_transactions where transaction_id <> 'ET3'),
      (select string_agg(raw, ' ') from provider_transactions where transaction_id <> 'ET3'),
      (select string_agg(previous::text, ' ') from row_history),
      (select string_agg(raw, ' ') from rejected_rows),
      (select string_agg(payload::text, ' ') from notifications),
      (select string_agg(body, ' ') from notification_quarantine),
      (select string_agg(response::text, ' ') from status_lookups)) as t`.execute(h.db);
  return r.rows[0]!.t;
}

describe('clearPersonalData (recon retention)', () => {
  it('redacts raw lines, payloads, bodies and history older than N days, table by table', async () => {
    const before = await personalText();
    for (const planted of [OLD, ACCOUNT, TOKEN, '****8642']) expect(before).toContain(planted);
    const business =
      await sql`select transaction_id, amount_cents, fee_cents, status, consumer_email from legacy_transactions order by 1`.execute(
        h.db,
      );

    const summary = await clearPersonalData(h.db, { olderThanDays: 30, now: NOW });
    expect(summary.cutoff).toBe('2026-03-11T00:00:00.000Z');
    expect(summary.cleared).toEqual({
      'legacy_transactions.raw': 2,
      'provider_transactions.raw': 2,
      'provider_returns.raw': 0,
      'provider_adjustments.raw': 0,
      'row_history.previous': 2,
      'rejected_rows.raw': 1,
      'notifications.payload': 1,
      'notification_quarantine.body': 1,
      'status_lookups.response': 1,
    });
    expect(summary.totalCleared).toBe(10);

    const after = await personalText();
    for (const planted of [OLD, ACCOUNT, TOKEN, '****8642']) expect(after).not.toContain(planted);
    const raw = await sql<{
      raw: string;
    }>`select raw from legacy_transactions where transaction_id = 'ET1'`.execute(h.db);
    expect(raw.rows[0]!.raw).toBe(
      `20260310,D,ORD-ET1,ET1,0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-1,101500,CA,${M},${M}`,
    );
    // Business columns stay; so do the recent row and its raw line.
    expect(
      (
        await sql`select transaction_id, amount_cents, fee_cents, status, consumer_email from legacy_transactions order by 1`.execute(
          h.db,
        )
      ).rows,
    ).toEqual(business.rows);
    const recent = await sql<{
      raw: string;
    }>`select raw from legacy_transactions where transaction_id = 'ET3'`.execute(h.db);
    expect(recent.rows[0]!.raw).toContain(NEW);
  });

  it('is idempotent, and a re-load of the old file changes nothing', async () => {
    const again = await clearPersonalData(h.db, { olderThanDays: 30, now: NOW });
    expect(again.totalCleared).toBe(0);
    const reload = await loadReport(
      h,
      { ...legacy, fileName: 'legacy5-again.csv' },
      text(`${line('ET1', 'S', OLD)}\n`),
    );
    expect(reload).toMatchObject({ rowsUpdated: 0, rowsUnchanged: 1 });
    expect(await personalText()).not.toContain(OLD);
  });

  it('refuses a negative or fractional number of days', async () => {
    await expect(clearPersonalData(h.db, { olderThanDays: -1 })).rejects.toThrow(/whole number of days/);
    await expect(clearPersonalData(h.db, { olderThanDays: 1.5 })).rejects.toThrow(/whole number of days/);
  });

  it('runs as `recon retention --raw-older-than DAYS` and prints what it cleared per table', async () => {
    const run = (...args: string[]) => runRecon(h.connectionString, ['retention', ...args]);
    const ok = await run('--raw-older-than', '0');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^personal data cleared from rows stored before \d{4}-\d{2}-\d{2}T/);
    expect(ok.stdout).toMatch(/legacy_transactions\.raw\s+1\n/);
    expect(ok.stdout).toMatch(/total\s+\d+\n$/);
    expect((await run('--raw-older-than', '0')).stdout).toMatch(/total\s+0\n$/);
    expect((await run('--raw-older-than', 'ten')).code).not.toBe(0);
  });
});
