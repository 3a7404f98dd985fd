/**
 * Sign-in cannot be guessed and cannot be used to lock people out (issue 26, section 1): attempts are
 * counted before the password check, atomically, per name and client address and per address; the
 * real user signs in from elsewhere; password checks run a bounded number at a time.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultPasswordCheckLimit } from '../../workbench/auth/password-checks.ts';
import { hashPassword } from '../../workbench/auth/secrets.ts';
import { useTestDatabase } from '../support/database.ts';
import { addCheapUsers, call, serveWorkbench, signIn, useWorkbench } from '../support/workbench-http.ts';

const h = useTestDatabase();
const server = useWorkbench(h);
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  const names = ['alice', 'carol', 'dave', ...Array.from({ length: 10 }, (_, i) => `spray${i}`)];
  await addCheapUsers(h.db, names, 'viewer', PASSWORD);
  const real = await hashPassword(PASSWORD);
  const burst = Array.from({ length: 20 }, (_, i) => `user${i}`);
  await sql`insert into workbench_users (username, role, password_hash)
    select unnest(${burst}::text[]), 'viewer', ${real}`.execute(h.db);
});

const attempt = (username: string, password: string, from = '127.0.0.1') =>
  call(server.base, 'POST', '/api/session', { body: { username, password }, from });

describe('sign-in throttle', () => {
  it('counts 40 simultaneous guesses for one name before checking them: at most 5 are checked', async () => {
    // A first delay longer than the burst takes, so that a slow machine lets no delayed attempt in.
    const burst = await serveWorkbench(h.db, { sessions: { throttle: { firstDelaySeconds: 60 } } });
    const passwords = Array.from({ length: 40 }, (_, i) => (i === 20 ? PASSWORD : `guess ${i}`));
    const answers = await Promise.all(
      passwords.map((password) =>
        call(burst.base, 'POST', '/api/session', {
          body: { username: 'alice', password },
          from: '127.0.0.5',
        }),
      ),
    );
    await burst.app.close();
    const statuses = answers.map((a) => a.status);
    const checked = statuses.filter((s) => s === 200 || s === 401).length;
    expect(checked).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40 - checked);
    // The right password got in only if it was among the checked ones: the burst bought nothing.
    const right = answers[20]!;
    expect([200, 429]).toContain(right.status);
  });

  it('slows one name from one address with growing delays, without locking its user out from elsewhere', async () => {
    const names = ['carol', ' Carol', 'CAROL ', 'carol', 'Carol', 'carol', 'CAROL'];
    const answers = await Promise.all(names.map((name) => attempt(name, 'wrong password', '127.0.0.6')));
    // Spaces and case make the same name: five checked, then each must wait.
    expect(answers.map((a) => a.status).sort()).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBe(1);
    expect(refused.json.message).not.toMatch(/\n/);
    expect(await lastDelaySeconds()).toBe(1);

    // The real user, from her own address, is not locked out.
    expect(typeof (await signIn(server.base, 'carol', PASSWORD, '127.0.0.7'))).toBe('object');

    // After the delay one more guess is checked, and the next delay is twice as long.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await lastDelaySeconds()).toBe(1);
    expect((await attempt('carol', 'wrong again', '127.0.0.6')).status).toBe(401);
    expect(await lastDelaySeconds()).toBe(2);
  });

  it('limits spraying a few guesses over many names from one address', async () => {
    // A first delay longer than the burst takes, so that a slow machine lets no delayed attempt in.
    const spray = await serveWorkbench(h.db, {
      sessions: { throttle: { clientFreeAttempts: 10, firstDelaySeconds: 60 } },
    });
    try {
      const sprayed = Array.from({ length: 10 }, (_, i) => `spray${i}`).flatMap((name) =>
        [1, 2, 3, 4].map((n) =>
          call(spray.base, 'POST', '/api/session', {
            body: { username: name, password: `spring2026-${n}` },
            from: '127.0.0.8',
          }),
        ),
      );
      const statuses = (await Promise.all(sprayed)).map((a) => a.status);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(30);
      // Everyone else signs in as usual.
      expect(typeof (await signIn(spray.base, 'spray3', PASSWORD, '127.0.0.9'))).toBe('object');
    } finally {
      await spray.app.close();
    }
  });
});

/** The delay the last counted name-and-address attempt set before the next may be checked. */
async function lastDelaySeconds(): Promise<number> {
  const row = await sql<{
    seconds: string;
  }>`select round(extract(epoch from next_allowed_at - last_attempt_at))::text
      as seconds from workbench_sign_in_throttle where scope = 'name_client'
    order by last_attempt_at desc limit 1`.execute(h.db);
  return Number(row.rows[0]?.seconds);
}

describe('password checks', () => {
  it('runs a bounded number of scrypt checks at once under 20 concurrent sign-ins', async () => {
    const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
    const original = crypto.scrypt;
    let running = 0;
    let most = 0;
    (crypto as { scrypt: unknown }).scrypt = (...args: unknown[]) => {
      running++;
      most = Math.max(most, running);
      const done = args.at(-1) as (...r: unknown[]) => void;
      args[args.length - 1] = (...r: unknown[]) => {
        running--;
        done(...r);
      };
      return (original as (...a: unknown[]) => void)(...args);
    };
    syncBuiltinESMExports();
    try {
      const viewer = await signIn(server.base, 'dave', PASSWORD, '127.0.0.10');
      if (typeof viewer === 'number') throw new Error(`sign-in answered ${viewer}`);
      most = 0;
      const burst = Array.from({ length: 20 }, (_, i) =>
        signIn(server.base, `user${i}`, PASSWORD, `127.0.1.${i + 1}`),
      );
      const started = performance.now();
      const worklist = await call(server.base, 'GET', '/api/discrepancies', {
        headers: { cookie: viewer.cookie },
        from: '127.0.0.10',
      });
      const worklistMs = performance.now() - started;
      const results = await Promise.all(burst);
      expect(results.every((r) => typeof r === 'object')).toBe(true);
      expect(worklist.status).toBe(200);
      expect(most).toBeLessThanOrEqual(defaultPasswordCheckLimit());
      process.stdout.write(
        `20 concurrent sign-ins: at most ${most} scrypt checks at once; a worklist read meanwhile took ${worklistMs.toFixed(0)} ms\n`,
      );
    } finally {
      (crypto as { scrypt: unknown }).scrypt = original;
      syncBuiltinESMExports();
    }
  });
});
