/**
 * The workbench (`recon serve`): web pages and the JSON API on one Fastify server. Every route says
 * the least role it needs (`config.role`); one hook authenticates (Bearer token, session cookie, or
 * the trusted SSO header when enabled), refuses with 401/403, and checks the CSRF token of every
 * state-changing request made with a session. The OpenAPI document is generated from the route
 * schemas. Every asset is served from workbench/assets (no CDN).
 */
import swagger from '@fastify/swagger';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { ReconError } from '../domain/errors.ts';
import {
  createWorkbenchMetrics,
  recordWorkbenchRequest,
  type WorkbenchMetrics,
} from '../observability/workbench-metrics.ts';
import { InvalidAccount, roleAllows } from './auth/accounts.ts';
import { sameSecret } from './auth/secrets.ts';
import {
  DEFAULT_SESSION_SETTINGS,
  enabledUser,
  openSession,
  sessionPrincipal,
  tokenPrincipal,
  type Principal,
  type SessionSettings,
} from './auth/sessions.ts';
import { ActionConflict, UnknownAssignee } from '../reconcile/discrepancies/actions.ts';
import { InvalidFilter } from '../reconcile/discrepancies/filter.ts';
import { DiscrepancyNotFound } from '../reconcile/discrepancies/row.ts';
import type { ScheduleReader, ScheduleState } from './queries/schedule.ts';
import { registerDiscrepancyRoutes } from './routes/discrepancies.ts';
import { registerOperationsRoutes } from './routes/operations.ts';
import { registerPages } from './routes/pages.ts';
import { registerScorecardRoutes } from './routes/scorecard.ts';
import { registerSessionRoutes } from './routes/session.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { createReplicaReads, type ReadReplica } from './replica-reads.ts';
import { addSchemas } from './schemas.ts';
import { parseCookies, SESSION_COOKIE, sessionCookie, type WorkbenchContext } from './context.ts';

export interface WorkbenchOptions {
  readonly db: Kysely<Database>;
  /** A streaming replica for the heavy reads (RECON_WORKBENCH_READ_URL; replica-reads.ts). */
  readonly readReplica?: ReadReplica;
  readonly sessions?: Partial<SessionSettings>;
  /**
   * Header that names the signed-in user, set by the company's SSO proxy (e.g. X-Forwarded-User).
   * Off unless given: with it, anyone who can reach the port directly can claim any user.
   */
  readonly trustedUserHeader?: string;
  /** Trust X-Forwarded-Proto/For from a proxy in front (for Secure cookies behind TLS termination). */
  readonly trustProxy?: boolean;
  readonly https?: { key: Buffer; cert: Buffer };
  readonly log?: (line: string) => void;
  /** The nightly schedule's state (from Temporal); without it, the pages say none is configured. */
  readonly schedule?: ScheduleReader;
  /** The registry `/metrics` answers from; without it, one of the server's own over `db`. */
  readonly metrics?: WorkbenchMetrics;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

async function authenticate(
  ctx: WorkbenchContext,
  options: WorkbenchOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Principal | null> {
  const auth = request.headers.authorization;
  if (auth?.startsWith('Bearer ')) return (await tokenPrincipal(ctx.db, auth.slice(7).trim())) ?? null;
  const secret = parseCookies(request.headers.cookie)[SESSION_COOKIE];
  const fromSession = secret ? await sessionPrincipal(ctx.db, ctx.sessions, secret) : undefined;
  const header = options.trustedUserHeader;
  const claimed = header ? request.headers[header.toLowerCase()] : undefined;
  if (typeof claimed === 'string' && claimed.trim() !== '') {
    if (fromSession && fromSession.name === claimed.trim().toLowerCase()) return fromSession;
    const user = await enabledUser(ctx.db, claimed);
    if (!user) return null;
    // The proxy vouches for the user: open a session so that state changes carry a CSRF token too.
    const opened = await openSession(ctx.db, ctx.sessions, user.username);
    reply.header('set-cookie', sessionCookie(request, opened.sessionSecret, ctx.sessions.maxSeconds));
    return { name: user.username, role: user.role, via: 'session', csrfToken: opened.csrfToken };
  }
  return fromSession ?? null;
}

function isDatabaseDown(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    (typeof code === 'string' &&
      ([
        'ECONNREFUSED',
        'ECONNRESET',
        'ETIMEDOUT',
        'EPIPE',
        '57P01',
        '57P02',
        '57P03',
        '53300',
        '55P03',
        '57014',
      ].includes(code) ||
        code.startsWith('08'))) ||
    /Connection terminated|timeout exceeded when trying to connect/.test(String((error as Error).message))
  );
}

/** Builds the workbench server (not listening yet). */
export async function buildWorkbench(options: WorkbenchOptions): Promise<FastifyInstance> {
  const ctx: WorkbenchContext = {
    db: options.db,
    reads: createReplicaReads(options.db, options.readReplica, options.log),
    sessions: { ...DEFAULT_SESSION_SETTINGS, ...options.sessions },
    metrics: options.metrics ?? createWorkbenchMetrics({ db: options.db }),
    schedule:
      options.schedule ??
      (async (): Promise<ScheduleState> => ({
        schedule_id: 'recon-nightly',
        reachable: false,
        message: 'no Temporal cluster configured for this server',
      })),
  };
  const app = Fastify({
    logger: false,
    trustProxy: options.trustProxy ?? false,
    ...(options.https ? { https: options.https } : {}),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false } },
  }) as unknown as FastifyInstance;
  app.decorateRequest('principal', null);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ibt-recon workbench API',
        version: '1',
        description:
          'Discrepancy worklist, evidence and actions, runs, loads and coverage. Browsers sign in with POST /api/session and send the csrfToken back as X-CSRF-Token on every state change; machines send Authorization: Bearer <token> (recon tokens create).',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
  });

  app.addHook('onRequest', async (request, reply) => {
    const needed = request.routeOptions.config.role;
    if (needed === undefined && request.routeOptions.url !== undefined) {
      return reply.code(500).send({ error: 'internal', message: 'route without a role' });
    }
    if (needed === 'public' || needed === undefined) return;
    const principal = await authenticate(ctx, options, request, reply);
    request.principal = principal;
    if (!principal) {
      if (request.routeOptions.config.page && request.method === 'GET')
        return reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`);
      return reply.code(401).header('www-authenticate', 'Bearer').send({
        error: 'unauthenticated',
        message: 'sign in (POST /api/session) or send Authorization: Bearer <token>',
      });
    }
    if (!roleAllows(principal.role, needed)) {
      return reply.code(403).send({
        error: 'forbidden',
        message: `${principal.name} is ${principal.role}; this needs ${needed}`,
      });
    }
    if (!SAFE_METHODS.has(request.method) && principal.via === 'session') {
      const sent = request.headers['x-csrf-token'];
      if (typeof sent !== 'string' || !principal.csrfToken || !sameSecret(sent, principal.csrfToken)) {
        return reply.code(403).send({
          error: 'csrf',
          message: 'missing or wrong X-CSRF-Token header: reload the page and try again',
        });
      }
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    recordWorkbenchRequest(ctx.metrics, {
      method: request.method,
      route: request.routeOptions.url,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.validation) {
      return reply.code(400).send({ error: 'bad_request', message: error.message });
    }
    if (error instanceof InvalidFilter || error instanceof UnknownAssignee || error instanceof InvalidAccount)
      return reply.code(400).send({ error: 'bad_request', message: error.message });
    if (error instanceof DiscrepancyNotFound)
      return reply.code(404).send({ error: 'not_found', message: error.message });
    if (error instanceof ActionConflict)
      return reply.code(409).send({ error: 'conflict', message: error.message });
    if (isDatabaseDown(error)) {
      return reply
        .code(503)
        .header('retry-after', '5')
        .send({ error: 'unavailable', message: 'the warehouse is unreachable or busy: retry shortly' });
    }
    if (error instanceof ReconError)
      return reply.code(400).send({ error: 'bad_request', message: error.message });
    if (typeof error.statusCode === 'number' && error.statusCode < 500)
      return reply.code(error.statusCode).send({ error: 'bad_request', message: error.message });
    options.log?.(`workbench: ${error.name}: ${error.message}`);
    return reply.code(500).send({ error: 'internal', message: 'internal error: see the server log' });
  });

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
  );

  addSchemas(app);
  registerSystemRoutes(app, ctx);
  registerSessionRoutes(app, ctx);
  registerDiscrepancyRoutes(app, ctx);
  registerOperationsRoutes(app, ctx);
  registerPages(app, ctx);
  registerScorecardRoutes(app, ctx);
  app.get('/api/openapi.json', { schema: { hide: true }, config: { role: 'public' } }, async () =>
    app.swagger(),
  );
  await app.ready();
  return app;
}
