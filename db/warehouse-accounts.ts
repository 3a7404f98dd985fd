import { type Kysely, sql } from 'kysely';
import type { Database } from './database.ts';

/**
 * The provider accounts the warehouse holds data for, sorted: those of its loads, its reconcile runs
 * and its ledger entries (which the merchant's system may write directly, without a load). Read by
 * `recon accounts list` and by the commands that read the warehouse, which accept these accounts
 * besides the configured ones. The ledger is read by a loose index scan of its primary key (account
 * first): one probe per account, whatever its size.
 */
export async function accountsWithData(db: Kysely<Database>): Promise<string[]> {
  const rows = await sql<{ account: string }>`
    with recursive ledger(account) as (
      (select account from merchant_ledger order by account limit 1)
      union all
      select (select m.account from merchant_ledger m where m.account > l.account order by m.account limit 1)
      from ledger l where l.account is not null
    )
    select account from loads
    union select account from reconcile_runs
    union select account from ledger where account is not null
    order by account`.execute(db);
  return rows.rows.map((r) => r.account);
}
