/**
 * Who is asking: a browser session (cookie), a machine (Bearer token) or, when explicitly enabled,
 * a user named by a trusted SSO proxy header. Sign-in failures are throttled per user name.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { isRole, type Role } from './accounts.ts';
import { csrfTokenFor, newSecret, sha256Hex, verifyPassword } from './secrets.ts';

export interface Principal {
  /** The name events record: the user name, or token:NAME. */
  readonly name: string;
  readonly role: Role;
  readonly via: 'session' | 'token';
  /** For sessions: the token the X-CSRF-Token header must carry on state changes. */
  readonly csrfToken?: string;
}

export interface SessionSettings {
  /** A session unused for this long expires. */
  readonly idleSeconds: number;
  /** A session expires this long after sign-in, used or not. */
  readonly maxSeconds: number;
  /** Failures of one user name within the window before sign-in is refused for a while. */
  readonly maxFailures: number;
  readonly failureWindowSeconds: number;
  readonly lockSeconds: number;
}

export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  idleSeconds: 30 * 60,
  maxSeconds: 12 * 3600,
  maxFailures: 5,
  failureWindowSeconds: 15 * 60,
  lockSeconds: 5 * 60,
};

export type SignInResult =
  | { ok: true; sessionSecret: string; csrfToken: string; role: Role; expiresAt: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number };

/**
 * Checks a user name and password and opens a session. A name with too many recent failures is
 * refused without checking the password until its lock ends; a success clears its failures.
 */
export async function signIn(
  db: Kysely<Database>,
  settings: SessionSettings,
  req: { username: string; password: string },
): Promise<SignInResult> {
  const username = req.username.trim().toLowerCase().slice(0, 200);
  const lock = await db
    .selectFrom('workbench_sign_in_failures')
    .select(sql<number>`ceil(extract(epoch from (locked_until - now())))::int`.as('seconds'))
    .where('username', '=', username)
    .where('locked_until', '>', sql<string>`now()`)
    .executeTakeFirst();
  if (lock) return { ok: false, reason: 'throttled', retryAfterSeconds: Math.max(1, lock.seconds) };

  const user = await db
    .selectFrom('workbench_users')
    .select(['username', 'role', 'password_hash'])
    .where('username', '=', username)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  const good = await verifyPassword(req.password, user?.password_hash ?? null);
  if (!good || !user || !isRole(user.role)) {
    await sql`insert into workbench_sign_in_failures as f (username, failures, first_failed_at)
      values (${username}, 1, now())
      on conflict (username) do update set
        failures = case when f.first_failed_at < now() - make_interval(secs => ${settings.failureWindowSeconds})
          then 1 else f.failures + 1 end,
        first_failed_at = case when f.first_failed_at < now() - make_interval(secs => ${settings.failureWindowSeconds})
          then now() else f.first_failed_at end,
        locked_until = case when f.first_failed_at >= now() - make_interval(secs => ${settings.failureWindowSeconds})
            and f.failures + 1 >= ${settings.maxFailures}
          then now() + make_interval(secs => ${settings.lockSeconds}) end`.execute(db);
    return { ok: false, reason: 'invalid' };
  }
  await db.deleteFrom('workbench_sign_in_failures').where('username', '=', username).execute();
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
    .select(['u.username', 'u.role', 's.last_seen_at'])
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
  return { name: row.username, role: row.role, via: 'session', csrfToken: csrfTokenFor(sessionSecret) };
}

export async function closeSession(db: Kysely<Database>, sessionSecret: string): Promise<void> {
  await db.deleteFrom('workbench_sessions').where('session_sha256', '=', sha256Hex(sessionSecret)).execute();
}

/** The principal of a live API token (revoked or unknown: undefined). */
export async function tokenPrincipal(db: Kysely<Database>, token: string): Promise<Principal | undefined> {
  const hash = sha256Hex(token);
  const t = await db
    .selectFrom('workbench_tokens')
    .select(['name', 'role'])
    .select(sql<boolean>`last_used_at is null or last_used_at < now() - interval '1 minute'`.as('stale'))
    .where('token_sha256', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!t || !isRole(t.role)) return undefined;
  if (t.stale)
    await sql`update workbench_tokens set last_used_at = now() where token_sha256 = ${hash}`.execute(db);
  return { name: `token:${t.name}`, role: t.role, via: 'token' };
}

/** An enabled user by name (the trusted SSO header names one). */
export async function enabledUser(
  db: Kysely<Database>,
  username: string,
): Promise<{ username: string; role: Role } | undefined> {
  const row = await db
    .selectFrom('workbench_users')
    .select(['username', 'role'])
    .where('username', '=', username.trim().toLowerCase())
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return row && isRole(row.role) ? { username: row.username, role: row.role } : undefined;
}
