/**
 * Workbench users and API tokens: what `recon users` and `recon tokens` do. Passwords and tokens are
 * stored as hashes only; a token is returned once, by {@link createToken}.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { isAccountName } from '../../domain/account-name.ts';
import { typedError } from '../../domain/errors.ts';
import { hashPassword, newSecret, sha256Hex } from './secrets.ts';

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether `role` may do what `needed` may. */
export function roleAllows(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** A user name, role or password the workbench refuses. */
export class InvalidAccount extends typedError('final') {}

const USERNAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

/** The accounts a user or token is limited to, checked; empty or absent: every account (null). */
export function accountLimit(accounts: readonly string[] | undefined): string[] | null {
  if (!accounts || accounts.length === 0) return null;
  for (const a of accounts)
    if (!isAccountName(a))
      throw new InvalidAccount(
        `account ${JSON.stringify(a)} is not an account name: use 1 to 32 of a-z, 0-9 and - (recon accounts list)`,
      );
  return [...new Set(accounts)].sort();
}

/**
 * Adds a user, or sets the role, password and accounts of an existing one (and enables it again).
 * Changing an existing user ends every session of that user, in the same transaction: a new
 * password, role or account limit applies from the next sign-in, never beside an older session.
 */
export async function addUser(
  db: Kysely<Database>,
  req: { username: string; role: Role; password: string; accounts?: readonly string[] },
): Promise<{ created: boolean }> {
  if (!USERNAME.test(req.username))
    throw new InvalidAccount(
      `user name ${JSON.stringify(req.username)} is not allowed: use 1-64 lower-case letters, digits and . _ @ -`,
    );
  if (req.password.length < 12)
    throw new InvalidAccount('the password is shorter than 12 characters: choose a longer one');
  const accounts = accountLimit(req.accounts);
  const passwordHash = await hashPassword(req.password);
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('workbench_users')
      .values({ username: req.username, role: req.role, password_hash: passwordHash, accounts })
      .onConflict((oc) =>
        oc
          .column('username')
          .doUpdateSet({ role: req.role, password_hash: passwordHash, disabled_at: null, accounts }),
      )
      .returning(sql<boolean>`(xmax = 0)`.as('created'))
      .executeTakeFirstOrThrow();
    if (!row.created)
      await trx.deleteFrom('workbench_sessions').where('username', '=', req.username).execute();
    return { created: row.created };
  });
}

/** Disables a user and ends its sessions. Throws {@link InvalidAccount} for an unknown user. */
export async function disableUser(db: Kysely<Database>, username: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('workbench_users')
      .set({ disabled_at: new Date().toISOString() })
      .where('username', '=', username)
      .returning('username')
      .executeTakeFirst();
    if (!row)
      throw new InvalidAccount(`no workbench user is named ${JSON.stringify(username)}: check the name`);
    await trx.deleteFrom('workbench_sessions').where('username', '=', username).execute();
  });
}

/** How long a new API token lives unless told otherwise, and the longest it may (days). */
export const TOKEN_DEFAULT_DAYS = 90;
export const TOKEN_MAX_DAYS = 365;

/**
 * Creates an API token; the token is in the result only, never stored. Names are unique (events
 * name the token by it); the token expires after `expiresInDays` (default {@link TOKEN_DEFAULT_DAYS},
 * at most {@link TOKEN_MAX_DAYS}) and sees only `accounts` when given.
 */
export async function createToken(
  db: Kysely<Database>,
  req: { name: string; role: Role; expiresInDays?: number; accounts?: readonly string[] },
): Promise<{ tokenId: number; token: string; expiresAt: string }> {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(req.name))
    throw new InvalidAccount(
      `token name ${JSON.stringify(req.name)} is not allowed: use 1-64 letters, digits and . _ -`,
    );
  const days = req.expiresInDays ?? TOKEN_DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > TOKEN_MAX_DAYS)
    throw new InvalidAccount(
      `a token lives 1 to ${TOKEN_MAX_DAYS} days, not ${days}: create a new one before it expires`,
    );
  const accounts = accountLimit(req.accounts);
  const token = `rwb_${newSecret()}`;
  const row = await db
    .insertInto('workbench_tokens')
    .values({
      name: req.name,
      role: req.role,
      token_sha256: sha256Hex(token),
      expires_at: sql<string>`now() + make_interval(days => ${days})`,
      accounts,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning(['token_id', 'expires_at'])
    .executeTakeFirst();
  if (!row)
    throw new InvalidAccount(
      `a token named ${JSON.stringify(req.name)} exists (names stay taken after revoke): choose another --name`,
    );
  return { tokenId: row.token_id, token, expiresAt: row.expires_at };
}

/** Revokes a token by id. Throws {@link InvalidAccount} when no live token has it. */
export async function revokeToken(db: Kysely<Database>, tokenId: number): Promise<void> {
  const row = await db
    .updateTable('workbench_tokens')
    .set({ revoked_at: new Date().toISOString() })
    .where('token_id', '=', tokenId)
    .where('revoked_at', 'is', null)
    .returning('token_id')
    .executeTakeFirst();
  if (!row) throw new InvalidAccount(`no live API token has id ${tokenId}: list them with recon tokens list`);
}

export async function listTokens(db: Kysely<Database>) {
  return db
    .selectFrom('workbench_tokens')
    .select([
      'token_id',
      'name',
      'role',
      'accounts',
      'created_at',
      'expires_at',
      'revoked_at',
      'last_used_at',
    ])
    .orderBy('token_id')
    .execute();
}
