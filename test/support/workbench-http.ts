/**
 * A real workbench server on a free port over the test file's database, and an HTTP client that can
 * come from another local address (127.0.0.2, ...: Linux routes all of 127/8 to the loopback), so
 * that tests can tell one client address from another without a proxy.
 */
import { randomBytes, scryptSync } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../db/database.ts';
import type { Role } from '../../workbench/auth/accounts.ts';
import { buildWorkbench, type WorkbenchOptions } from '../../workbench/server.ts';

export interface Served {
  readonly base: string;
  readonly port: number;
  readonly app: FastifyInstance;
}

export async function serveWorkbench(
  db: Kysely<Database>,
  options: Partial<WorkbenchOptions> = {},
): Promise<Served> {
  const app = await buildWorkbench({ db, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { base: `http://127.0.0.1:${port}`, port, app };
}

/**
 * The workbench for a test file's tests (test/security/*): served over the file's database in
 * beforeAll (after the hooks registered before this call, the database's first), closed with the
 * HTTP agents in afterAll. Read its fields inside a test or a later hook.
 */
export function useWorkbench(
  h: { readonly db: Kysely<Database> },
  options: Partial<WorkbenchOptions> = {},
): Served {
  const served = {} as { base: string; port: number; app: FastifyInstance };
  beforeAll(async () => {
    Object.assign(served, await serveWorkbench(h.db, options));
  });
  afterAll(async () => {
    await served.app?.close();
    await closeAgents();
  });
  return served;
}

/**
 * Workbench users of one role with one password, hashed at a low scrypt cost (the cost is stored
 * with each hash and read back by the check): tests that sign in many times stay fast. The real
 * cost is `addUser`'s (workbench/auth/accounts.ts).
 */
export async function addCheapUsers(
  db: Kysely<Database>,
  usernames: readonly string[],
  role: Role,
  password: string,
): Promise<void> {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 });
  const hash = `scrypt$1024$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
  await sql`insert into workbench_users (username, role, password_hash)
    select unnest(${usernames}::text[]), ${role}, ${hash}`.execute(db);
}

const agents = new Map<string, Agent>();

/** fetch from a given local address (default 127.0.0.1); redirects are not followed. */
export function fetchFrom(from: string, url: string, init: RequestInit = {}): Promise<Response> {
  let agent = agents.get(from);
  if (!agent) {
    agent = new Agent({ localAddress: from, connections: 64 });
    agents.set(from, agent);
  }
  return fetch(url, { redirect: 'manual', ...init, dispatcher: agent });
}

export async function closeAgents(): Promise<void> {
  for (const agent of agents.values()) await agent.close();
  agents.clear();
}

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked by exact assertions
  readonly headers: Headers;
}

/** A request whose answer is read whole; JSON bodies parsed when they are JSON. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; from?: string; rawBody?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  } else if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetchFrom(options.from ?? '127.0.0.1', `${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers as unknown as Headers };
}

export interface SignedIn {
  readonly cookie: string;
  readonly csrf: string;
}

/** Signs in; the answer's status when it is not 200. */
export async function signIn(
  base: string,
  username: string,
  password: string,
  from = '127.0.0.1',
): Promise<SignedIn | number> {
  const res = await call(base, 'POST', '/api/session', { body: { username, password }, from });
  if (res.status !== 200) return res.status;
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  return { cookie, csrf: (res.json as { csrfToken: string }).csrfToken };
}

/** Headers that send a session and its CSRF token. */
export function as(s: SignedIn): Record<string, string> {
  return { cookie: s.cookie, 'x-csrf-token': s.csrf };
}
