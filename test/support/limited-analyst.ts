import { type Kysely, sql } from 'kysely';
import { createAnalystLogin, grantAnalystAccounts } from '../../db/analyst-logins.ts';
import type { Database } from '../../db/database.ts';

/** An analyst login limited to `accounts` (recon analysts add, then grant --accounts). */
export async function createLimitedAnalyst(
  db: Kysely<Database>,
  login: string,
  accounts: readonly string[],
): Promise<void> {
  await createAnalystLogin(db, { login });
  await grantAnalystAccounts(db, login, accounts);
}

/** Drops a login a test made, and what it owns; nothing when it is not there. */
export async function dropAnalystLogin(db: Kysely<Database>, login: string): Promise<void> {
  await sql`drop owned by ${sql.id(login)}`.execute(db).catch(() => {});
  await sql`drop role if exists ${sql.id(login)}`.execute(db).catch(() => {});
}
