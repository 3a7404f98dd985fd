/**
 * Password hashing (scrypt, memory-hard) and the random secrets of the workbench: session cookies,
 * API tokens and the CSRF token derived from a session. Only hashes reach the database.
 */
import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// scrypt cost: N=2^15, r=8 (32 MiB per hash, about 50-100 ms on one core). Stored with the hash so
// that it can be raised later without invalidating existing passwords.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;

function scryptAsync(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_BYTES, { N: n, r, p, maxmem: 256 * n * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url): what workbench_users.password_hash holds. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

// Checked against an unknown user name, so that a wrong name costs as much time as a wrong password.
const DUMMY_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_BYTES).toString('base64url')}`;

/** Whether `password` matches `stored`; with `stored` null, spends the same time and answers false. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? DUMMY_HASH).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return stored !== null && key.length === expected.length && timingSafeEqual(key, expected);
}

/** 32 random bytes, base64url: a session cookie or (with a prefix) an API token. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * The CSRF token of a session: derived from the session cookie (which a cross-site page cannot
 * read), so nothing more is stored and every page of the session can embed it.
 */
export function csrfTokenFor(sessionSecret: string): string {
  return createHmac('sha256', sessionSecret).update('recon-workbench-csrf').digest('base64url');
}

/** Constant-time comparison of two strings. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
