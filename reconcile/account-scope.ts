import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { parseAccountName } from '../domain/account-name.ts';

/**
 * The tables a reconcile run reads or writes. Matching never pairs rows of different accounts: for
 * the run's transaction, each of these names is a temporary view of the table's rows of one account
 * (temporary relations come first in the search path), with that account as the default of
 * `account` and a check option. Every rule, join and write of the run then stays within the account
 * without naming it, so no join key can forget it.
 */
export const SCOPED = [
  'provider_transactions',
  'legacy_transactions',
  'provider_returns',
  'provider_adjustments',
  'merchant_ledger',
  'notifications',
  'notification_quarantine',
  'status_lookups',
  'transaction_matches',
  'return_matches',
  'notification_matches',
  'source_matches',
  'discrepancies',
  'discrepancy_events',
  'discrepancy_totals',
  'reconcile_runs',
  'manual_match_items',
  'match_candidates',
] as const;

/** Scopes the transaction to `account` (see {@link SCOPED}); {@link endAccountScope} before commit. */
export async function beginAccountScope(trx: Transaction<Database>, account: string): Promise<void> {
  // The name becomes a literal in the views' DDL: it is checked here whatever the caller did.
  parseAccountName(account);
  const literal = sql.lit(account);
  // The claims this run writes are changes of this account only (migration 0013's data_changes).
  await sql`select set_config('recon.run_account', ${account}, true)`.execute(trx);
  for (const table of SCOPED) {
    await sql`create temporary view ${sql.id(table)} as
      select * from ${sql.id('public', table)} where account = ${literal}
      with local check option`.execute(trx);
    await sql`alter view ${sql.id(table)} alter column account set default ${literal}`.execute(trx);
  }
}

/**
 * Drops the views: the session goes back to the pool, and nothing after the run may see one
 * account's rows only. (A failed run's rollback drops them too.)
 */
export async function endAccountScope(trx: Transaction<Database>): Promise<void> {
  await sql`drop view ${sql.join(SCOPED.map((t) => sql.id('pg_temp', t)))}`.execute(trx);
  await sql`select set_config('recon.run_account', '', true)`.execute(trx);
}
