import { createReadStream, promises as fs } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { createMigrator, migrateToLatest } from '../../db/migrate.ts';
import { MIGRATIONS_DIR } from '../../db/schema-state.ts';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { Readable } from 'node:stream';
import { withDatabase } from '../global-setup.ts';
import { createTestDatabase } from '../support/database.ts';

// The upgrade: a warehouse on the single-account schema (every migration before the accounts one)
// holding loads, provider rows, ledger entries, rejected rows, history and notifications is migrated.
// Every row stays, unchanged, under the account `default`, and loading the same files again changes
// nothing. The old warehouse's rows are the ones the loader writes (loaded into a current warehouse,
// then copied without `account`), so the comparison is with what a single-account load produced.

const FIXTURES = new URL('../fixtures/', import.meta.url);
const fixture = (path: string) => createReadStream(new URL(path, FIXTURES));

const FILES: readonly { path: string; req: Omit<LoadRequest, 'origin' | 'environment'> }[] = [
  {
    path: 'report/transactions-and-returns.json',
    req: { source: 'report-transactions', format: 'report-json', fileName: 'report.json' },
  },
  {
    path: 'legacy/type5-default.csv',
    req: { source: 'legacy-transactions', format: 'legacy', queryType: '5', fileName: 'type5.csv' },
  },
  {
    path: 'legacy/type5-bad-rows.csv',
    req: { source: 'legacy-transactions', format: 'legacy', queryType: '5', fileName: 'bad.csv' },
  },
  {
    path: 'legacy/type1-returns.csv',
    req: { source: 'legacy-returns', format: 'legacy', queryType: '1', fileName: 'type1.csv' },
  },
  {
    path: 'legacy/type4-adjustments.csv',
    req: { source: 'legacy-adjustments', format: 'legacy', queryType: '4', fileName: 'type4.csv' },
  },
];

const NOTIFICATIONS = [
  {
    merchant: { merchantId: 'MRC1', merchantTransactionId: 'ORD-1' },
    transaction: {
      transactionId: 'T-UP-1',
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESS',
      transactionAmount: 100,
      currencyCode: 'CAD',
    },
  },
  { not: 'a notification' },
];

async function loadEverything(handle: DatabaseHandle) {
  const summaries = [];
  for (const f of FILES) {
    summaries.push(
      await loadReport(handle, { ...f.req, origin: 'file', environment: 'staging' }, fixture(f.path)),
    );
  }
  summaries.push(
    await loadLedger(
      handle,
      { fileName: 'ledger.csv', origin: 'file', environment: 'staging' },
      fixture('ledger/ledger.csv'),
    ),
  );
  return summaries;
}

/** Tables copied into the old warehouse, parents first. */
const COPIED = [
  'warehouse_settings',
  'loads',
  'rejected_rows',
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'provider_adjustments',
  'merchant_ledger',
  'row_history',
  'notifications',
  'notification_quarantine',
] as const;

async function admin(text: string) {
  const client = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Every row of a table as JSON without `account`, in a stable order. */
/** Columns that migrations after the accounts one add to a copied table (0015_follow_up_and_time_order). */
const ADDED_LATER: Record<string, string[]> = {
  notification_quarantine: ['transaction_id', 'replayed_at', 'notification_id'],
  row_history: ['refused'],
  // 0029_returns_adjustments_roll_forward, which fills them from returned_on.
  provider_returns: ['report_date', 'settlement_date', 'last_updated_on'],
};

async function rowsOf(handle: DatabaseHandle, table: string): Promise<string[]> {
  const r = await sql<{
    row: string;
  }>`select (to_jsonb(t) - 'account' - ${sql.val(ADDED_LATER[table] ?? [])}::text[])::text as row
    from ${sql.table(table)} t order by 1`.execute(handle.db);
  return r.rows.map((x) => x.row);
}

let current: DatabaseHandle;
let old: DatabaseHandle;
const oldName = `recon_upgrade_${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  current = await createTestDatabase();
  await admin(`create database ${oldName}`);
  const connectionString = withDatabase(inject('pgAdminUrl'), oldName);
  const pool = createPool(connectionString, 5);
  old = { db: createDatabase(pool), pool, connectionString, close: async () => {} };
});
afterAll(async () => {
  await current?.close();
  await old?.db.destroy();
  await admin(`drop database if exists ${oldName} with (force)`);
});

describe('upgrading a single-account warehouse', () => {
  it('keeps every row under default, and re-loading the same files changes nothing', async () => {
    const names = (await fs.readdir(MIGRATIONS_DIR))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    const accounts = names.findIndex((n) => /accounts$/.test(n));
    expect(accounts).toBeGreaterThan(0);
    const result = await createMigrator(old.db).migrateTo(names[accounts - 1]!);
    expect(result.error).toBeUndefined();
    const hasAccount = await sql<{ n: number }>`select count(*)::int as n from information_schema.columns
      where table_schema = 'public' and column_name = 'account'`.execute(old.db);
    expect(hasAccount.rows[0]!.n).toBe(0);

    const firstLoads = await loadEverything(current);
    await importNotificationHistory(
      current.db,
      Readable.from(NOTIFICATIONS.map((n) => `${JSON.stringify(n)}\n`)),
    );
    // The single-account warehouse's rows: as the loader wrote them, less the column it did not have.
    for (const table of COPIED) {
      const r = await sql<{ rows: unknown }>`select coalesce(jsonb_agg(to_jsonb(t) - 'account'), '[]') as rows
        from ${sql.table(table)} t`.execute(current.db);
      await sql`insert into ${sql.table(table)} overriding system value
        select * from jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(r.rows[0]!.rows)}::jsonb)`.execute(
        old.db,
      );
    }
    const before: Record<string, string[]> = {};
    for (const table of COPIED) before[table] = await rowsOf(old, table);
    expect(before.provider_transactions!.length).toBeGreaterThan(0);
    expect(before.rejected_rows!.length).toBeGreaterThan(0);
    expect(before.notification_quarantine!.length).toBeGreaterThan(0);

    await migrateToLatest(old.db);
    for (const table of COPIED) expect(await rowsOf(old, table), table).toEqual(before[table]);
    const withAccount = await sql<{ table_name: string }>`select c.table_name
      from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
      where c.table_schema = 'public' and c.column_name = 'account' and t.table_type = 'BASE TABLE'`.execute(
      old.db,
    );
    expect(withAccount.rows.length).toBeGreaterThanOrEqual(20);
    for (const { table_name } of withAccount.rows) {
      const r = await sql<{ account: string | null }>`select distinct account
        from ${sql.table(table_name)}`.execute(old.db);
      for (const { account } of r.rows) expect(account, table_name).toBe('default');
    }

    // Identities continue after the copied ids (they were copied with their values).
    const identities = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = 'public' and is_identity = 'YES'`.execute(old.db);
    for (const { table_name, column_name } of identities.rows) {
      await sql`select setval(pg_get_serial_sequence(${table_name}, ${column_name}),
        greatest(1, (select max(${sql.ref(column_name)}) from ${sql.table(table_name)})))`.execute(old.db);
    }
    const again = await loadEverything(old);
    expect(again.map((s) => [s.rowsInserted, s.rowsUpdated])).toEqual(firstLoads.map(() => [0, 0]));
    for (const table of COPIED.filter((t) => t !== 'loads' && t !== 'rejected_rows')) {
      expect(await rowsOf(old, table), table).toEqual(before[table]);
    }
  });
});
