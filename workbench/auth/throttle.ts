/**
 * The sign-in throttle: every attempt is counted before its password is checked, by one statement
 * that PostgreSQL runs under the row's lock, so that guesses sent at once are counted one after the
 * other and concurrency buys an attacker nothing.
 *
 * Two counts, each with a growing delay once its free attempts are used:
 * - per normalised user name and client address (`name_client`): slows guessing one password
 *   without letting anyone lock the real user out from another address;
 * - per client address (`client`): slows spraying a few guesses over every name.
 * An attempt that arrives before its key's next allowed instant is refused unchecked and not counted.
 * A success clears its name's count and takes its own attempt back from the address's count.
 * IPv6 clients are counted by their /64, which one attacker usually holds whole.
 */
import { isIPv6 } from 'node:net';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { sha256Hex } from './secrets.ts';

export interface ThrottleSettings {
  /** Attempts of one name from one address checked without delay. */
  readonly nameFreeAttempts: number;
  /** Attempts from one address, all names together, checked without delay. */
  readonly clientFreeAttempts: number;
  /** The first delay after the free attempts; each further attempt doubles it. */
  readonly firstDelaySeconds: number;
  readonly maxDelaySeconds: number;
  /** After this long without an attempt, a key's count starts again. */
  readonly quietSeconds: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = {
  nameFreeAttempts: 5,
  clientFreeAttempts: 30,
  firstDelaySeconds: 1,
  maxDelaySeconds: 15 * 60,
  quietSeconds: 60 * 60,
};

export type Scope = 'name_client' | 'client';

/** The client address as counted: IPv4 (also when mapped into IPv6) whole, IPv6 by its /64. */
export function clientKey(address: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The user name as sign-in compares it: trimmed, lower case. */
export function normalisedName(username: string): string {
  return username.trim().toLowerCase().slice(0, 200);
}

function keyOf(scope: Scope, name: string, client: string): string {
  return sha256Hex(scope === 'client' ? `client\u0000${client}` : `name\u0000${name}\u0000${client}`);
}

/**
 * Counts one attempt of a key, unless its delay has not passed: then nothing is counted and the
 * seconds to wait are returned.
 */
async function claim(
  db: Kysely<Database>,
  settings: ThrottleSettings,
  scope: Scope,
  key: string,
  free: number,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const attempts = sql`(case when t.last_attempt_at < clock_timestamp() - make_interval(secs => ${settings.quietSeconds})
      then 1 else t.attempts + 1 end)`;
  const delayAfter = (n: RawAttempts) =>
    sql`(case when ${n} < ${free}::int then interval '0' else make_interval(secs => least(${settings.maxDelaySeconds}::float8,
      ${settings.firstDelaySeconds}::float8 * power(2, least(${n} - ${free}::int, 30)))) end)`;
  const claimed = await sql<{ attempts: number }>`insert into workbench_sign_in_throttle as t
      (scope, key_sha256, attempts, last_attempt_at, next_allowed_at)
    values (${scope}, ${key}, 1, clock_timestamp(), clock_timestamp() + ${delayAfter(sql`1`)})
    on conflict (scope, key_sha256) do update set
      attempts = ${attempts},
      last_attempt_at = clock_timestamp(),
      next_allowed_at = clock_timestamp() + ${delayAfter(attempts)}
    where t.next_allowed_at <= clock_timestamp()
    returning t.attempts`.execute(db);
  if (claimed.rows.length > 0) return { ok: true };
  const wait = await sql<{
    seconds: number;
  }>`select ceil(extract(epoch from next_allowed_at - clock_timestamp()))::int
      as seconds from workbench_sign_in_throttle where scope = ${scope} and key_sha256 = ${key}`.execute(db);
  return { ok: false, retryAfterSeconds: Math.max(1, wait.rows[0]?.seconds ?? 1) };
}

type RawAttempts = ReturnType<typeof sql>;

/**
 * Counts a sign-in attempt of `name` from `client` before its password is checked: `ok` when the
 * password may be checked now, else the seconds to wait.
 */
export async function claimSignInAttempt(
  db: Kysely<Database>,
  settings: ThrottleSettings,
  attempt: { name: string; client: string },
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const client = clientKey(attempt.client);
  const byName = await claim(
    db,
    settings,
    'name_client',
    keyOf('name_client', attempt.name, client),
    settings.nameFreeAttempts,
  );
  if (!byName.ok) return byName;
  return claim(db, settings, 'client', keyOf('client', attempt.name, client), settings.clientFreeAttempts);
}

/** After a good password: the name starts afresh from this address, and the address gets its attempt back. */
export async function signInSucceeded(
  db: Kysely<Database>,
  attempt: { name: string; client: string },
): Promise<void> {
  const client = clientKey(attempt.client);
  await sql`delete from workbench_sign_in_throttle
    where scope = 'name_client' and key_sha256 = ${keyOf('name_client', attempt.name, client)}`.execute(db);
  await sql`update workbench_sign_in_throttle set attempts = greatest(attempts - 1, 0)
    where scope = 'client' and key_sha256 = ${keyOf('client', attempt.name, client)}`.execute(db);
}
