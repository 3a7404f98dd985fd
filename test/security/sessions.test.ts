/**
 * Sessions and tokens end when they should (issue 26, section 2): a password, role or account change
 * and disabling a user end that user's sessions; tokens expire, have unique names and an account
 * limit; the single-sign-on header is believed only from the configured proxies, without a session
 * row per request.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, createToken, disableUser, TOKEN_MAX_DAYS } from '../../workbench/auth/accounts.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  addCheapUsers,
  as,
  call,
  type Served,
  serveWorkbench,
  type SignedIn,
  signIn,
  useWorkbench,
} from '../support/workbench-http.ts';
import { buildWorkbench } from '../../workbench/server.ts';

const h = useTestDatabase();
const server = useWorkbench(h);
const PASSWORD = 'correct horse battery';
const opened: Served[] = [];

beforeAll(async () => {
  await addCheapUsers(h.db, ['alice', 'bob', 'carol', 'dave', 'erin'], 'operator', PASSWORD);
});
afterAll(async () => {
  for (const s of opened) await s.app.close();
});

async function session(name: string): Promise<SignedIn> {
  const s = await signIn(server.base, name, PASSWORD);
  if (typeof s === 'number') throw new Error(`sign-in of ${name} answered ${s}`);
  return s;
}

const reads = async (s: SignedIn) =>
  (await call(server.base, 'GET', '/api/discrepancies', { headers: as(s) })).status;
const writes = async (s: SignedIn) =>
  (
    await call(server.base, 'POST', '/api/discrepancies/bulk', {
      headers: as(s),
      body: { ids: [1], action: 'ack', note: 'checked' },
    })
  ).status;

describe('sessions end when their user changes', () => {
  it('ends every session of a user whose password is changed (recon users add on an existing user)', async () => {
    const first = await session('alice');
    const second = await session('alice');
    expect([await reads(first), await writes(first)]).toEqual([200, 200]);
    await addUser(h.db, { username: 'alice', role: 'operator', password: 'a new password 2026' });
    expect([await reads(first), await writes(first), await reads(second)]).toEqual([401, 401, 401]);
  });

  it('ends the sessions of a user whose role or accounts change, and of a disabled user', async () => {
    const bob = await session('bob');
    await addUser(h.db, { username: 'bob', role: 'viewer', password: PASSWORD });
    expect(await reads(bob)).toBe(401);
    const again = await session('bob');
    await addUser(h.db, { username: 'bob', role: 'viewer', password: PASSWORD, accounts: ['alpha'] });
    expect(await reads(again)).toBe(401);
    const carol = await session('carol');
    await disableUser(h.db, 'carol');
    expect(await reads(carol)).toBe(401);
  });
});

describe('API tokens', () => {
  it('expire: 90 days by default, at most a year, refused after', async () => {
    const t = await createToken(h.db, { name: 'grafana', role: 'viewer' });
    const days = (Date.parse(t.expiresAt) - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(90);
    await expect(
      createToken(h.db, { name: 'forever', role: 'viewer', expiresInDays: TOKEN_MAX_DAYS + 1 }),
    ).rejects.toThrow(/lives 1 to 365 days/);
    const bearer = { authorization: `Bearer ${t.token}` };
    expect((await call(server.base, 'GET', '/api/runs', { headers: bearer })).status).toBe(200);
    await sql`update workbench_tokens set expires_at = now() - interval '1 second' where token_id = ${t.tokenId}`.execute(
      h.db,
    );
    expect((await call(server.base, 'GET', '/api/runs', { headers: bearer })).status).toBe(401);
  });

  it('have unique names, and may be limited to accounts', async () => {
    await createToken(h.db, { name: 'robot', role: 'operator' });
    await expect(createToken(h.db, { name: 'robot', role: 'viewer' })).rejects.toThrow(
      /a token named "robot" exists/,
    );
    const limited = await createToken(h.db, { name: 'alpha-robot', role: 'viewer', accounts: ['alpha'] });
    const row = await h.db
      .selectFrom('workbench_tokens')
      .select('accounts')
      .where('token_id', '=', limited.tokenId)
      .executeTakeFirstOrThrow();
    expect(row.accounts).toEqual(['alpha']);
    await expect(
      createToken(h.db, { name: 'bad', role: 'viewer', accounts: ['Not An Account'] }),
    ).rejects.toThrow(/not an account name/);
  });
});

describe('single sign-on behind a proxy', () => {
  it('refuses to start with the SSO header but no proxy addresses', async () => {
    await expect(buildWorkbench({ db: h.db, trustedUserHeader: 'X-Forwarded-User' })).rejects.toThrow(
      /RECON_WORKBENCH_TRUSTED_PROXIES/,
    );
  });

  it('believes the header only from the configured proxy, and adds no session row per request', async () => {
    const sso = await serveWorkbench(h.db, {
      trustedUserHeader: 'X-Forwarded-User',
      trustedProxies: ['127.0.0.2'],
    });
    opened.push(sso);
    const header = { 'x-forwarded-user': 'dave' };
    const direct = await call(sso.base, 'GET', '/api/session', { headers: header, from: '127.0.0.3' });
    expect(direct.status).toBe(401);

    const sessionsBefore = await sessionRows();
    const viaProxy = await Promise.all(
      Array.from({ length: 32 }, () =>
        call(sso.base, 'GET', '/api/session', { headers: header, from: '127.0.0.2' }),
      ),
    );
    expect(viaProxy.map((r) => r.status)).toEqual(Array(32).fill(200));
    expect(viaProxy[0]!.json.username).toBe('dave');
    expect(await sessionRows()).toBe(sessionsBefore);

    // State changes still need the CSRF token: the one in the page, echoing the recon_csrf cookie.
    const first = viaProxy[0]!;
    const csrfCookie = first.headers.get('set-cookie')!.split(';')[0]!;
    const token = first.json.csrfToken as string;
    const body = { ids: [1], action: 'ack', note: 'checked' };
    const refused = await call(sso.base, 'POST', '/api/discrepancies/bulk', {
      headers: header,
      body,
      from: '127.0.0.2',
    });
    expect(refused.status).toBe(403);
    const forged = await call(sso.base, 'POST', '/api/discrepancies/bulk', {
      headers: { ...header, 'x-csrf-token': token },
      body,
      from: '127.0.0.2',
    });
    expect(forged.status).toBe(403);
    const done = await call(sso.base, 'POST', '/api/discrepancies/bulk', {
      headers: { ...header, cookie: csrfCookie, 'x-csrf-token': token },
      body,
      from: '127.0.0.2',
    });
    expect(done.status).toBe(200);
  });

  it('takes the client address from X-Forwarded-For only when a trusted proxy sends it', async () => {
    const proxied = await serveWorkbench(h.db, { trustedProxies: ['127.0.0.2'] });
    opened.push(proxied);
    // A client that is not the proxy cannot dodge the throttle by naming a new address each time.
    const spoofed = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(proxied.base, 'POST', '/api/session', {
          body: { username: 'erin', password: `guess ${i}` },
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
          from: '127.0.0.4',
        }),
      ),
    );
    expect(spoofed.filter((r) => r.status === 401).length).toBeLessThanOrEqual(5);
    // Through the proxy, each client is its own: erin signs in from her address.
    const real = await call(proxied.base, 'POST', '/api/session', {
      body: { username: 'erin', password: PASSWORD },
      headers: { 'x-forwarded-for': '203.0.113.9' },
      from: '127.0.0.2',
    });
    expect(real.status).toBe(200);
  });
});

async function sessionRows(): Promise<number> {
  const r = await sql<{ n: string }>`select count(*)::text as n from workbench_sessions`.execute(h.db);
  return Number(r.rows[0]!.n);
}
