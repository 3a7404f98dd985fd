/**
 * Who is asking: a browser session (cookie), a machine (Bearer token) or, when explicitly enabled,
 * a user named by a trusted SSO proxy header. Sign-in attempts are throttled (throttle.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { isRole, type Role } from './accounts.ts';
import type { PasswordChecks } from './password-checks.ts';
import { csrfTokenFor, newSecret, sha256Hex, verifyPassword } from './secrets.ts';
import {
  claimSignInAttempt,
  DEFAULT_THROTTLE,
  normalisedName,
  signInSucceeded,
  type ThrottleSettings,
} from './throttle.ts';

export interface Principal {
  /** The name events record: the user name, or token:NAME. */
  readonly name: string;
  readonly role: Role;
  /** session: a cookie of POST /api/session; token: Bearer; sso: the trusted proxy's header. */
  readonly via: 'session' | 'token' | 'sso';
  /** For sessions and SSO: the token the X-CSRF-Token header must carry on state changes. */
  readonly csrfToken?: string;
  /** The provider accounts it may see and act on; null: every account. */
  readonly accounts: readonly string[] | null;
}

export interface SessionSettings {
  /** A session unused for this long expires. */
  readonly idleSeconds: number;
  /** A session expires this long after sign-in, used or not. */
  readonly maxSeconds: number;
  /** Sign-in attempts counted per name and address, and per address (throttle.ts). */
  readonly throttle: ThrottleSettings;
}

export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  idleSeconds: 30 * 60,
  maxSeconds: 12 * 3600,
  throttle: DEFAULT_THROTTLE,
};

export type SignInResult =
  | { ok: true; sessionSecret: string; csrfToken: string; role: Role; expiresAt: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

/**
 * Checks a user name and password from a client address and opens a session. The attempt is counted
 * before the password is checked (throttle.ts); one that must wait is refused unchecked. The check
 * itself waits for a slot of `checks` (password-checks.ts), which may throw PasswordChecksBusy.
 */
export async function signIn(
  db: Kysely<Database>,
  settings: SessionSettings,
  checks: PasswordChecks,
  req: { username: string; password: string; client: string },
): Promise<SignInResult> {
  const username = normalisedName(req.username);
  const attempt = { name: username, client: req.client };
  const claimed = await claimSignInAttempt(db, settings.throttle, attempt);
  if (!claimed.ok) return { ok: false, reason: 'throttled', retryAfterSeconds: claimed.retryAfterSeconds };

  const user = await db
    .selectFrom('workbench_users')
    .select(['username', 'role', 'password_hash'])
    .where('username', '=', username)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  const good = await checks.run(() => verifyPassword(req.password, user?.password_hash ?? null));
  if (!good || !user || !isRole(user.role)) return { ok: false, reason: 'invalid' };
  await signInSucceeded(db, attempt);
  const opened = await openSession(db, settings, user.username);
  return { ok: true, ...opened, role: user.role };
}

/** Opens a session for an existing, enabled user (after a password, or a trusted SSO header). */
export async function openSession(
  db: Kysely<Database>,
  settings: SessionSettings,
  username: string,
): Promise<{ sessionSecret: string; csrfToken: string; expiresAt: string }> {
  const sessionSecret = newSecret();
  const row = await db
    .insertInto('workbench_sessions')
    .values({
      session_sha256: sha256Hex(sessionSecret),
      username,
      expires_at: sql<string>`now() + make_interval(secs => ${Math.min(settings.idleSeconds, settings.maxSeconds)})`,
    })
    .returning('expires_at')
    .executeTakeFirstOrThrow();
  return { sessionSecret, csrfToken: csrfTokenFor(sessionSecret), expiresAt: row.expires_at };
}

/**
 * The principal of a live session, moving its idle expiry on (at most every 30 s, never past the
 * absolute lifetime); undefined when the session is unknown, expired, or its user disabled.
 */
export async function sessionPrincipal(
  db: Kysely<Database>,
  settings: SessionSettings,
  sessionSecret: string,
): Promise<Principal | undefined> {
  const hash = sha256Hex(sessionSecret);
  const row = await db
    .selectFrom('workbench_sessions as s')
    .innerJoin('workbench_users as u', 'u.username', 's.username')
    .select(['u.username', 'u.role', 'u.accounts', 's.last_seen_at'])
    .select(sql<boolean>`s.last_seen_at < now() - interval '30 seconds'`.as('stale'))
    .where('s.session_sha256', '=', hash)
    .where('s.expires_at', '>', sql<string>`now()`)
    .where('u.disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row || !isRole(row.role)) return undefined;
  if (row.stale) {
    await sql`update workbench_sessions set last_seen_at = now(),
        expires_at = least(now() + make_interval(secs => ${settings.idleSeconds}),
                           created_at + make_interval(secs => ${settings.maxSeconds}))
      where session_sha256 = ${hash}`.execute(db);
  }
  return {
    name: row.username,
    role: row.role,
    via: 'session',
    csrfToken: csrfTokenFor(sessionSecret),
    accounts: row.accounts,
  };
}

export async function closeSession(db: Kysely<Database>, sessionSecret: string): Promise<void> {
  await db.deleteFrom('workbench_sessions').where('session_sha256', '=', sha256Hex(sessionSecret)).execute();
}

/** The principal of a live API token (revoked, expired or unknown: undefined). */
export async function tokenPrincipal(db: Kysely<Database>, token: string): Promise<Principal | undefined> {
  const hash = sha256Hex(token);
  const t = await db
    .selectFrom('workbench_tokens')
    .select(['name', 'role', 'accounts'])
    .select(sql<boolean>`last_used_at is null or last_used_at < now() - interval '1 minute'`.as('stale'))
    .where('token_sha256', '=', hash)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<string>`now()`)
    .executeTakeFirst();
  if (!t || !isRole(t.role)) return undefined;
  if (t.stale)
    await sql`update workbench_tokens set last_used_at = now() where token_sha256 = ${hash}`.execute(db);
  return { name: `token:${t.name}`, role: t.role, via: 'token', accounts: t.accounts };
}

/** An enabled user by name (the trusted SSO header names one). */
export async function enabledUser(
  db: Kysely<Database>,
  username: string,
): Promise<{ username: string; role: Role; accounts: string[] | null } | undefined> {
  const row = await db
    .selectFrom('workbench_users')
    .select(['username', 'role', 'accounts'])
    .where('username', '=', normalisedName(username))
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return row && isRole(row.role)
    ? { username: row.username, role: row.role, accounts: row.accounts }
    : undefined;
}
