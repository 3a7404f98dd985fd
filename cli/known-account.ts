import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';

/**
 * For a command that reads the warehouse (`recon reconcile`, `recon report`): `--account` must name a
 * configured account or one the warehouse holds data for; anything else is refused before anything is
 * recorded, the same way as by every command (config/accounts.ts, unknownAccount).
 */
export async function requireKnownAccount(db: Kysely<Database>, name: string): Promise<void> {
  const { loadAccounts, unknownAccount } = await import('../config/accounts.ts');
  const { accountsWithData } = await import('../db/warehouse-accounts.ts');
  const configured = loadAccounts().list.map((a) => a.name);
  if (configured.includes(name)) return;
  const held = await accountsWithData(db);
  if (!held.includes(name)) throw unknownAccount(name, [...configured, ...held]);
}
