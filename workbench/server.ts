/**
 * The workbench (`recon serve`): web pages and the JSON API on one Fastify server. Every route says
 * the least role it needs (`config.role`); one hook authenticates (auth/authenticate.ts: Bearer
 * token, session cookie, or the SSO header from a trusted proxy), refuses with 401/403, and checks
 * the CSRF token of every state-changing request made with a session or SSO. Every request's values
 * and every answer's headers pass input-checks.ts. The OpenAPI document is generated from the route
 * schemas. Every asset is served from workbench/assets (no CDN).
 */
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { ConfigError, ReconError } from '../domain/errors.ts';
import {
  createWorkbenchMetrics,
  recordWorkbenchRequest,
  type WorkbenchMetrics,
} from '../observability/workbench-metrics.ts';
import { InvalidAccount, roleAllows } from './auth/accounts.ts';
import { addressMatcher, authenticate, csrfHolds } from './auth/authenticate.ts';
import { createPasswordChecks, PasswordChecksBusy } from './auth/password-checks.ts';
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from './auth/sessions.ts';
import type { ThrottleSettings } from './auth/throttle.ts';
import { cannotShowPage, errorPage } from './pages/error.ts';
import { addInputChecks, oneLine } from './input-checks.ts';
import { ActionConflict, UnknownAssignee } from '../reconcile/discrepancies/actions.ts';
import { InvalidFilter } from '../reconcile/discrepancies/filter.ts';
import { DiscrepancyNotFound } from '../reconcile/discrepancies/row.ts';
import { MatchConflict, MatchNotFound } from '../reconcile/manual-matches/record.ts';
import type { ReconcileSettings } from '../reconcile/settings.ts';
import { createPreviewJobs, PreviewBusy } from './preview-jobs.ts';
import type { ScheduleReader, ScheduleState } from './queries/schedule.ts';
import { registerDiscrepancyRoutes } from './routes/discrepancies.ts';
import { registerMatchRoutes } from './routes/matches.ts';
import { registerOperationsRoutes } from './routes/operations.ts';
import { registerPages } from './routes/pages.ts';
import { registerPreviewRoutes } from './routes/previews.ts';
import { registerScorecardRoutes } from './routes/scorecard.ts';
import { registerSessionRoutes } from './routes/session.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { registerToleranceRoutes } from './routes/tolerances.ts';
import { createReplicaReads, type ReadReplica } from './replica-reads.ts';
import { addSchemas } from './schemas.ts';
import { SESSION_COOKIE, type WorkbenchContext } from './context.ts';

export interface WorkbenchOptions {
  readonly db: Kysely<Database>;
  /** A streaming replica for the heavy reads (RECON_WORKBENCH_READ_URL; replica-reads.ts). */
  readonly readReplica?: ReadReplica;
  readonly sessions?: Partial<Omit<SessionSettings, 'throttle'>> & { throttle?: Partial<ThrottleSettings> };
  /**
   * Addresses or CIDR ranges of the proxies in front (RECON_WORKBENCH_TRUSTED_PROXIES): only from
   * them are X-Forwarded-For/-Proto believed (the client address that sign-in throttles, Secure
   * cookies behind TLS termination) and the {@link trustedUserHeader}.
   */
  readonly trustedProxies?: readonly string[];
  /**
   * Header that names the signed-in user, set by the company's SSO proxy (e.g. X-Forwarded-User).
   * Believed only on connections from {@link trustedProxies}; needs them.
   */
  readonly trustedUserHeader?: string;
  /** Password checks (scrypt) that may run at once; default: half the cores (password-checks.ts). */
  readonly passwordChecks?: number;
  readonly https?: { key: Buffer; cert: Buffer };
  readonly log?: (line: string) => void;
  /** The nightly schedule's state (from Temporal); without it, the pages say none is configured. */
  readonly schedule?: ScheduleReader;
  /** The registry `/metrics` answers from; without it, one of the server's own over `db`. */
  readonly metrics?: WorkbenchMetrics;
  /** The reconcile settings a preview of tolerances matches with (those of the nightly runs). */
  readonly reconcileSettings?: Partial<ReconcileSettings>;
  /** Where previews of tolerances run (long statements: not the pages' bounded pool); default `db`. */
  readonly previewDb?: Kysely<Database>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The SSO settings checked: a header needs proxies to believe it from. */
function ssoOf(options: WorkbenchOptions) {
  const proxies = options.trustedProxies ?? [];
  let trusted: (address: string | undefined) => boolean;
  try {
    trusted = addressMatcher(proxies);
  } catch (error) {
    throw new ConfigError(
      `RECON_WORKBENCH_TRUSTED_PROXIES: ${(error as Error).message}: list addresses or ranges such as 10.0.0.5, 10.0.0.0/24`,
    );
  }
  if (!options.trustedUserHeader) return undefined;
  if (proxies.length === 0)
    throw new ConfigError(
      '--trusted-user-header needs RECON_WORKBENCH_TRUSTED_PROXIES (the addresses of the SSO proxy): without it anyone who reaches the port could claim any user',
    );
  return { header: options.trustedUserHeader.toLowerCase(), trusted };
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
  const sso = ssoOf(options);
  const ctx = contextOf(options);
  const app = Fastify({
    logger: false,
    trustProxy: options.trustedProxies?.length ? [...options.trustedProxies] : false,
    ...(options.https ? { https: options.https } : {}),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false } },
  }) as unknown as FastifyInstance;
  app.decorateRequest('principal', null);

  await app.register(swagger, OPENAPI);

  app.addHook('onRequest', (request, reply) => authorise(ctx, sso, request, reply));

  app.addHook('onResponse', async (request, reply) => {
    recordWorkbenchRequest(ctx.metrics, {
      method: request.method,
      route: request.routeOptions.url,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => answerError(options, error, request, reply));
  app.setNotFoundHandler(answerNotFound);

  addInputChecks(app);
  addSchemas(app);
  registerSystemRoutes(app, ctx);
  registerSessionRoutes(app, ctx);
  registerDiscrepancyRoutes(app, ctx);
  registerMatchRoutes(app, ctx);
  registerOperationsRoutes(app, ctx);
  registerPages(app, ctx);
  registerScorecardRoutes(app, ctx);
  registerToleranceRoutes(app, ctx);
  registerPreviewRoutes(app, ctx);
  // A preview still running holds a transaction of `db`: it ends before the server says it closed.
  app.addHook('onClose', () => ctx.previews.settled());
  app.get('/api/openapi.json', { schema: { hide: true }, config: { role: 'public' } }, async () =>
    app.swagger(),
  );
  await app.ready();
  return app;
}

/** The workbench's context from its options: the defaults filled in. */
function contextOf(options: WorkbenchOptions): WorkbenchContext {
  return {
    db: options.db,
    passwordChecks: createPasswordChecks(options.passwordChecks),
    reads: createReplicaReads(options.db, options.readReplica, options.log),
    sessions: {
      ...DEFAULT_SESSION_SETTINGS,
      ...options.sessions,
      throttle: { ...DEFAULT_SESSION_SETTINGS.throttle, ...options.sessions?.throttle },
    },
    metrics: options.metrics ?? createWorkbenchMetrics({ db: options.db }),
    previews: createPreviewJobs(options.previewDb ?? options.db, options.reconcileSettings, options.log),
    schedule:
      options.schedule ??
      (async (): Promise<ScheduleState> => ({
        schedule_id: 'recon-nightly',
        reachable: false,
        message: 'no Temporal cluster configured for this server',
      })),
  };
}

/** The head of the OpenAPI document; the paths come from the route schemas. */
const OPENAPI: SwaggerOptions = {
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
};

/**
 * Every request's check: the route's role, the principal (401, or the sign-in page for a page), the
 * principal's role (403) and, on a state change, the CSRF token (403).
 */
async function authorise(
  ctx: WorkbenchContext,
  sso: ReturnType<typeof ssoOf>,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const needed = request.routeOptions.config.role;
  if (needed === undefined && request.routeOptions.url !== undefined) {
    return reply.code(500).send({ error: 'internal', message: 'route without a role' });
  }
  if (needed === 'public' || needed === undefined) return;
  const principal = await authenticate(ctx, sso, request, reply);
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
  if (!SAFE_METHODS.has(request.method)) {
    if (!csrfHolds(request, principal)) {
      return reply.code(403).send({
        error: 'csrf',
        message: 'missing or wrong X-CSRF-Token header: reload the page and try again',
      });
    }
  }
}

/** The answer to a failed request: a page for a page, else JSON with a status that says whose fault it is. */
function answerError(
  options: WorkbenchOptions,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  // A page that cannot be shown as asked says why in a page of its own, with the way back.
  if (request.routeOptions.config.page && (error.validation || error instanceof ReconError))
    return reply
      .code(400)
      .type('text/html; charset=utf-8')
      .send(cannotShowPage(request.principal, oneLine(error.message), request.url));
  if (error.validation) {
    return reply.code(400).send({ error: 'bad_request', message: oneLine(error.message) });
  }
  if (error instanceof PasswordChecksBusy)
    return reply.code(503).header('retry-after', '2').send({ error: 'busy', message: error.message });
  if (error instanceof InvalidFilter || error instanceof UnknownAssignee || error instanceof InvalidAccount)
    return reply.code(400).send({ error: 'bad_request', message: error.message });
  if (error instanceof DiscrepancyNotFound || error instanceof MatchNotFound)
    return reply.code(404).send({ error: 'not_found', message: error.message });
  if (error instanceof ActionConflict || error instanceof MatchConflict || error instanceof PreviewBusy)
    return reply.code(409).send({ error: 'conflict', message: error.message });
  if (isDatabaseDown(error)) {
    return reply
      .code(503)
      .header('retry-after', '5')
      .send({ error: 'unavailable', message: 'the warehouse is unreachable or busy: retry shortly' });
  }
  if (error instanceof ReconError)
    return reply.code(400).send({ error: 'bad_request', message: oneLine(error.message) });
  if (typeof error.statusCode === 'number' && error.statusCode < 500)
    return reply.code(error.statusCode).send({ error: 'bad_request', message: oneLine(error.message) });
  options.log?.(
    `workbench: ${request.method} ${request.routeOptions.url ?? '?'}: ${error.name}: ${oneLine(error.message)}`,
  );
  return reply.code(500).send({ error: 'internal', message: 'internal error: see the server log' });
}

function answerNotFound(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0]!;
  const message = `no route ${request.method} ${path}`;
  // A browser that asked for a page gets a page; the JSON API (and every non-page caller) keeps JSON.
  if (asksForPage(request.method, path, request.headers.accept))
    return reply
      .code(404)
      .type('text/html; charset=utf-8')
      .send(errorPage(null, 'Page not found', `There is no page at ${oneLine(path).slice(0, 200)}.`));
  return reply.code(404).send({ error: 'not_found', message });
}

/** A GET of an address outside the API, from a client that takes HTML first (a browser's Accept). */
function asksForPage(method: string, path: string, accept: string | undefined): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (path.startsWith('/api/') || path === '/metrics' || path === '/health') return false;
  return /^\s*text\/html\b/.test(accept ?? '');
}
