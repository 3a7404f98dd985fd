import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { grantAnalystAccounts } from '../../db/analyst-logins.ts';
import { savePullCursor } from '../../db/pull-cursors.ts';
import { quarantineNotification } from '../../ingest/notifications/store-notification.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { deriveMerchantView } from '../../sandbox/merchant-view.ts';
import { createTestDatabase } from '../support/database.ts';
import { createLimitedAnalyst, dropAnalystLogin } from '../support/limited-analyst.ts';
import { loadMerchantView } from '../support/load-merchant-view.ts';

// An analyst login limited to some accounts (recon analysts grant --accounts) sees no row of another
// account in any table or view it can select: every relation is taken from the catalog, so a table or
// view added later is checked too.

let h: DatabaseHandle;
const LOGIN = `ana_ca_${process.pid}`;
const ACCOUNTS = ['ca-main', 'us-main'];

beforeAll(async () => {
  h = await createTestDatabase();
  const view = deriveMerchantView({ seed: 977, transactions: 400, from: '2026-12-20', to: '2027-01-03' });
  for (const [i, account] of ACCOUNTS.entries()) {
    await loadMerchantView(h.db, view, { account, feeSchedule: i === 0 });
    await reconcileRange(h.db, { ...view.range, now: view.asOf, account });
    await quarantineNotification(h.db, {
      account,
      kind: 'transaction',
      reason: 'bad',
      body: `{"a":"${account}"}`,
    });
    await savePullCursor(h.db, {
      account,
      source: 'report-transactions',
      from: '2026-12-20',
      to: '2026-12-21',
      loadId: 1,
      fileSha256: null,
      rowsLoaded: 0,
      workflowId: 'w',
      runId: 'r',
    });
  }
  await createLimitedAnalyst(h.db, LOGIN, ['ca-main']);
});
afterAll(async () => {
  await dropAnalystLogin(h.db, LOGIN);
  await h?.close();
});

interface Readable {
  schema: string;
  name: string;
  has_account: boolean;
}

/** Every relation the login can select something of, and whether it has an `account` column. */
async function readable(): Promise<Readable[]> {
  const r = await sql<Readable>`
    select n.nspname as schema, c.relname as name,
      exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'account' and not a.attisdropped
              and has_column_privilege(${LOGIN}, c.oid, a.attnum, 'SELECT')) as has_account
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'v', 'm', 'p', 'f')
      and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
      and has_schema_privilege(${LOGIN}, n.oid, 'USAGE')
      and has_any_column_privilege(${LOGIN}, c.oid, 'SELECT')
    order by 1, 2`.execute(h.db);
  return r.rows;
}

describe('analyst logins limited to some accounts', () => {
  it('see no row of another account in any table or view they can select', async () => {
    const relations = await readable();
    expect(relations.length).toBeGreaterThan(20);
    // Relations without accounts hold nothing of one account (settings, fee schedule, migrations, alerts).
    for (const r of relations.filter((x) => !x.has_account)) {
      expect(
        [
          'alert_deliveries',
          'fee_schedule',
          'warehouse_settings',
          'kysely_migration',
          'kysely_migration_lock',
        ],
        r.name,
      ).toContain(r.name);
    }
    const seen: Record<string, { mine: number; others: number; all: number }> = {};
    for (const r of relations.filter((x) => x.has_account)) {
      const table = sql.table(`${r.schema}.${r.name}`);
      const all = await sql<{
        n: number;
      }>`select count(*)::int as n from ${table} where account = 'us-main'`.execute(h.db);
      const counts = await h.db.connection().execute(async (conn) => {
        await sql`set role ${sql.id(LOGIN)}`.execute(conn);
        try {
          return await sql<{ mine: number; others: number }>`select
            count(*) filter (where account = 'ca-main')::int as mine,
            count(*) filter (where account is distinct from 'ca-main')::int as others from ${table}`.execute(
            conn,
          );
        } finally {
          await sql`reset role`.execute(conn);
        }
      });
      seen[r.name] = { ...counts.rows[0]!, all: all.rows[0]!.n };
    }
    for (const [name, c] of Object.entries(seen)) expect(c.others, name).toBe(0);
    // The data is there: the other account's rows exist, and the login sees its own account's.
    const withData = Object.entries(seen)
      .filter(([, c]) => c.all > 0)
      .map(([name]) => name);
    expect(withData.length).toBeGreaterThanOrEqual(15);
    for (const name of withData) expect(seen[name]!.mine, name).toBeGreaterThan(0);
  });

  it('sees every account again once the limit is lifted', async () => {
    await grantAnalystAccounts(h.db, LOGIN, 'all');
    const n = await h.db.connection().execute(async (conn) => {
      await sql`set role ${sql.id(LOGIN)}`.execute(conn);
      try {
        return await sql<{
          n: number;
        }>`select count(distinct account)::int as n from provider_transactions_redacted`.execute(conn);
      } finally {
        await sql`reset role`.execute(conn);
      }
    });
    expect(n.rows[0]!.n).toBe(2);
    await grantAnalystAccounts(h.db, LOGIN, ['ca-main']);
  });
});
