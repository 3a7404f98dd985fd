/**
 * Time limits of analyst logins. recon_analyst is NOLOGIN, and settings of a role (ALTER ROLE ... SET)
 * are not inherited by its members: each login role gets its own, set here.
 *
 * The pipeline does not depend on them (it takes no lock an analyst session can hold: docs/operations.md, "When something fails");
 * they keep a forgotten session from holding back VACUUM for hours and a runaway query from a server's
 * CPU and memory.
 */

import { InvalidAccountName, isAccountName } from '../domain/account-name.ts';
import { type Kysely, sql } from 'kysely';
import { ConfigError } from '../domain/errors.ts';
import { ANALYST_LIMIT_DEFAULTS, type AnalystLimits } from './analyst-limits.ts';
import type { Database } from './database.ts';

const LOGIN = /^[a-z_][a-z0-9_]{0,62}$/;

async function applyLimits(db: Kysely<Database>, login: string, limits: AnalystLimits): Promise<void> {
  const role = sql.id(login);
  await sql`alter role ${role} set statement_timeout = ${sql.lit(`${limits.statementTimeoutSeconds}s`)}`.execute(
    db,
  );
  await sql`alter role ${role} set idle_in_transaction_session_timeout = ${sql.lit(
    `${limits.idleInTransactionSeconds}s`,
  )}`.execute(db);
}

/**
 * Creates the login role `login` as a member of recon_analyst (or makes an existing role one) and
 * sets its time limits. `password` (optional; from RECON_ANALYST_PASSWORD, never the command line) is
 * set when given. Needs a role with CREATEROLE (the warehouse owner usually is).
 */
export async function createAnalystLogin(
  db: Kysely<Database>,
  options: { login: string; password?: string; limits?: Partial<AnalystLimits> },
): Promise<{ created: boolean; limits: AnalystLimits }> {
  const { login } = options;
  if (!LOGIN.test(login)) {
    throw new ConfigError(
      `analyst login ${JSON.stringify(login)}: use lower-case letters, digits and _ (at most 63, not starting with a digit)`,
    );
  }
  const limits = { ...ANALYST_LIMIT_DEFAULTS, ...options.limits };
  return db.transaction().execute(async (trx) => {
    const exists = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_roles where rolname = ${login}`.execute(trx);
    const created = exists.rows[0]!.n === 0;
    if (created) await sql`create role ${sql.id(login)} login`.execute(trx);
    await sql`grant recon_analyst to ${sql.id(login)}`.execute(trx);
    if (options.password !== undefined) {
      await sql`alter role ${sql.id(login)} password ${sql.lit(options.password)}`.execute(trx);
    }
    await applyLimits(trx, login, limits);
    return { created, limits };
  });
}

/**
 * Sets the time limits on every login role that is a member of recon_analyst (directly or through
 * other roles), e.g. logins created by hand before. Superusers are left alone. Returns their names.
 */
export async function applyAnalystLimits(
  db: Kysely<Database>,
  limits: Partial<AnalystLimits> = {},
): Promise<string[]> {
  const all = { ...ANALYST_LIMIT_DEFAULTS, ...limits };
  const r = await sql<{ rolname: string }>`
    select rolname from pg_roles
    where rolcanlogin and not rolsuper and rolname <> 'recon_analyst'
      and pg_has_role(oid, 'recon_analyst', 'member')
    order by rolname`.execute(db);
  for (const { rolname } of r.rows) await applyLimits(db, rolname, all);
  return r.rows.map((row) => row.rolname);
}

/**
 * Limits the analyst login `login` to the rows of `accounts` (row-level security on every table with
 * `account`, the same condition in every analyst view: migration 0010_accounts), or, with
 * 'all', lifts the limit. Replaces any earlier grant. Returns the accounts the login now sees
 * ('all' for every account).
 */
export async function grantAnalystAccounts(
  db: Kysely<Database>,
  login: string,
  accounts: readonly string[] | 'all',
): Promise<readonly string[] | 'all'> {
  if (!LOGIN.test(login)) {
    throw new ConfigError(`analyst login ${JSON.stringify(login)}: not a login name (recon analysts add)`);
  }
  if (accounts !== 'all') {
    if (accounts.length === 0) throw new ConfigError('--accounts: name at least one account');
    const bad = accounts.find((a) => !isAccountName(a));
    if (bad !== undefined) throw new InvalidAccountName(bad);
  }
  return db.transaction().execute(async (trx) => {
    const member = await sql<{ n: number }>`select count(*)::int as n from pg_roles
      where rolname = ${login} and pg_has_role(oid, 'recon_analyst', 'member')`.execute(trx);
    if (member.rows[0]!.n === 0) {
      throw new ConfigError(
        `${login} is not an analyst login: create it first with recon analysts add ${login}`,
      );
    }
    await sql`delete from recon_private.analyst_accounts where role_name = ${login}`.execute(trx);
    if (accounts === 'all') return 'all';
    const unique = [...new Set(accounts)].sort();
    await sql`insert into recon_private.analyst_accounts (role_name, account)
      select ${login}, unnest(${unique}::text[])`.execute(trx);
    return unique;
  });
}
