/**
 * A real workbench server on a free port over the test file's database, and an HTTP client that can
 * come from another local address (127.0.0.2, ...: Linux routes all of 127/8 to the loopback), so
 * that tests can tell one client address from another without a proxy.
 */
import type { FastifyInstance } from 'fastify';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
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
