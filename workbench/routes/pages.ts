/**
 * Server-rendered pages and their assets (served by the app itself: no CDN): the worklist, one
 * discrepancy, the overview, runs and loads, coverage, sign-in. An error on a page is a page.
 */
import { readFileSync } from 'node:fs';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ReconError } from '../../domain/errors.ts';
import { discrepancyDetail } from '../../reconcile/discrepancies/detail.ts';
import { accountScope } from '../account-scope.ts';
import { DiscrepancyNotFound } from '../../reconcile/discrepancies/row.ts';
import { coverage, lastDayWithData, listLoads, listRuns } from '../queries/operations.ts';
import { overview } from '../queries/overview.ts';
import { worklistScreen } from '../queries/worklist-screen.ts';
import { readFilterForm } from '../pages/filter-form.ts';
import { discrepancyPage } from '../pages/discrepancy.ts';
import { matchingOf } from '../queries/matching.ts';
import { errorPage } from '../pages/error.ts';
import { coveragePage, runsPage, signInPage } from '../pages/operations.ts';
import { overviewPage } from '../pages/overview.ts';
import { worklistPage } from '../pages/worklist.ts';
import type { WorkbenchContext } from '../context.ts';
import { filterProperties, pageIdParams, pageQuery, pageRoute, pageSchema } from '../schemas.ts';
import { addDays, daysInclusive, isValidDate } from '../../domain/time/calendar.ts';
import { sameSiteNext } from '../redirects.ts';
import { defaultCoverageRange } from './operations.ts';

const ASSETS: Record<string, { type: string; body: Buffer }> = Object.fromEntries(
  [
    ['app.css', 'text/css; charset=utf-8'],
    ['app.js', 'text/javascript; charset=utf-8'],
  ].map(([name, type]) => [
    name,
    { type: type!, body: readFileSync(new URL(`../assets/${name}`, import.meta.url)) },
  ]),
);

const hidden = { hide: true } as const;

/**
 * The worklist page's parameters: what its filter form sends, as typed (empty fields, `10.00`,
 * `usd`), so that filter-form.ts can answer a wrong value beside its field instead of the schema
 * refusing the whole page; and the paging (after or before a cursor, the position).
 */
const text = (description: string, maxLength = 200) => ({ type: 'string', maxLength, description });
const WORKLIST_PAGE_QUERY = {
  ...Object.fromEntries(
    Object.entries(filterProperties).map(([name, p]) => [
      name,
      text(`${(p as { description?: string }).description ?? name} (as typed in the form)`),
    ]),
  ),
  min: text('At stake at least, in dollars and cents of the currency (10, 10.00, 1,250.50).'),
  after: text('The page after this cursor.', 400),
  before: text('The page before this cursor.', 400),
  cursor: text('The page after this cursor (older links).', 400),
  at: text('Position of the first item of the page, for "51–100 of N".', 12),
};

async function enabledUsers(ctx: WorkbenchContext): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom('workbench_users')
    .select('username')
    .where('disabled_at', 'is', null)
    .orderBy('username')
    .execute();
  return rows.map((r) => r.username);
}

export function registerPages(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { config: { role: 'public' }, schema: hidden },
    async (request, reply) => {
      const asset = ASSETS[request.params.name];
      if (!asset) return reply.code(404).send({ error: 'not_found', message: 'no such asset' });
      return reply.type(asset.type).header('cache-control', 'no-cache').send(asset.body);
    },
  );

  app.addHook('onSend', async (request, reply, payload) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
      reply.header(
        'content-security-policy',
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
      );
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'same-origin');
    }
    return payload;
  });

  app.get<{ Querystring: { next?: string } }>(
    '/sign-in',
    {
      config: { role: 'public' },
      schema: pageSchema('The sign-in page; next is where to go after it (a path of this site)', {
        querystring: pageQuery({ next: { type: 'string', maxLength: 2000 } }),
      }),
    },
    async (request, reply) => {
      return reply.type('text/html; charset=utf-8').send(signInPage(sameSiteNext(request.query.next)));
    },
  );

  // The pages sit in a scope of their own so that an error on a page is answered as a page.
  void app.register(async (pages) => {
    pages.setErrorHandler(pageErrorHandler);
    registerPageRoutes(pages, ctx);
  });
}

/** An error on a page, shown as a page: a browser never gets the JSON API's error body. */
function pageErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const html = (status: number, title: string, message: string) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(errorPage(request.principal, title, message));
  if (error instanceof ReconError) return html(400, 'That cannot be shown', error.message);
  if (typeof error.statusCode === 'number' && error.statusCode < 500)
    return html(error.statusCode, 'That cannot be shown', error.message);
  // Errors of the database connection carry a code (ECONNREFUSED, 57P01, ...); the server log has it.
  if (typeof (error as { code?: unknown }).code === 'string') {
    reply.header('retry-after', '5');
    return html(503, 'The warehouse is unreachable or busy', 'Retry in a few seconds.');
  }
  return html(500, 'Something went wrong', 'The page could not be made: the server log says why.');
}

function registerPageRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  registerDiscrepancyPages(app, ctx);
  registerOperationsPages(app, ctx);
}

/** The worklist page (the home page) and the page of one discrepancy. */
function registerDiscrepancyPages(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Querystring: Record<string, string> }>(
    '/',
    pageRoute('viewer', 'The worklist page', { querystring: pageQuery(WORKLIST_PAGE_QUERY) }),
    async (request, reply) => {
      const { cursor, after, before, at, ...rest } = request.query;
      const form = readFilterForm(rest);
      const paging = {
        ...((after ?? cursor) ? { after: after ?? cursor } : before ? { before } : {}),
        ...(at && /^\d{1,9}$/.test(at) ? { at: Number(at) } : {}),
      };
      // The form's filter, within the principal's accounts (account-scope.ts).
      const filter = form.filter ? { ...form.filter, accounts: accountScope(request) } : undefined;
      const [screen, users] = await Promise.all([
        filter ? ctx.reads.read(request.principal, (db) => worklistScreen(db, filter, paging)) : null,
        enabledUsers(ctx),
      ]);
      return reply
        .code(filter ? 200 : 400)
        .type('text/html; charset=utf-8')
        .send(worklistPage(request.principal!, form, screen, users));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/discrepancies/:id',
    pageRoute('viewer', 'One discrepancy', { params: pageIdParams }),
    async (request, reply) => {
      const id = Number(request.params.id);
      const detail =
        Number.isSafeInteger(id) && id > 0
          ? await discrepancyDetail(ctx.db, id, accountScope(request)).catch((e: unknown) => {
              if (e instanceof DiscrepancyNotFound) return undefined;
              throw e;
            })
          : undefined;
      if (!detail)
        return reply
          .code(404)
          .type('text/html; charset=utf-8')
          .send(
            errorPage(
              request.principal,
              'No such discrepancy',
              `Discrepancy ${request.params.id.slice(0, 40)} does not exist: check the number, or find it on the worklist.`,
            ),
          );
      return reply
        .type('text/html; charset=utf-8')
        .send(
          discrepancyPage(
            request.principal!,
            detail,
            await enabledUsers(ctx),
            await matchingOf(ctx, detail.discrepancy, accountScope(request)),
          ),
        );
    },
  );
}

/** The runs and loads, coverage and overview pages. */
function registerOperationsPages(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get('/runs', pageRoute('viewer', 'Runs and loads'), async (request, reply) => {
    const [[runs, loads], schedule] = await Promise.all([
      ctx.reads.read(request.principal, (db) =>
        Promise.all([
          listRuns(db, { limit: 100 }, accountScope(request)),
          listLoads(db, { limit: 100 }, accountScope(request)),
        ]),
      ),
      ctx.schedule(),
    ]);
    return reply.type('text/html; charset=utf-8').send(runsPage(request.principal!, runs, loads, schedule));
  });

  app.get<{ Querystring: { from?: string; to?: string } }>(
    '/coverage',
    pageRoute('viewer', 'Coverage by Eastern day and source', {
      querystring: pageQuery({ from: { type: 'string' }, to: { type: 'string' } }),
    }),
    async (request, reply) => {
      const to =
        request.query.to && isValidDate(request.query.to)
          ? request.query.to
          : ((await ctx.reads.read(request.principal, (db) => lastDayWithData(db, accountScope(request)))) ??
            defaultCoverageRange().to);
      let from =
        request.query.from && isValidDate(request.query.from) ? request.query.from : addDays(to, -34);
      if (daysInclusive(from, to) < 1 || daysInclusive(from, to) > 401) from = addDays(to, -34);
      const data = await ctx.reads.read(request.principal, (db) =>
        coverage(db, from, to, accountScope(request)),
      );
      return reply
        .type('text/html; charset=utf-8')
        .send(coveragePage(request.principal!, { from, to, ...data }));
    },
  );

  app.get<{ Querystring: { from?: string; to?: string } }>(
    '/overview',
    pageRoute('viewer', 'The overview: open money, new against resolved, share matched, ages', {
      querystring: pageQuery({
        from: text('First business date, YYYY-MM-DD.', 40),
        to: text('Last business date.', 40),
      }),
    }),
    async (request, reply) => {
      const { from, to } = request.query;
      const data = await ctx.reads.read(request.principal, (db) =>
        overview(
          db,
          {
            ...(typeof from === 'string' ? { from } : {}),
            ...(typeof to === 'string' ? { to } : {}),
          },
          accountScope(request),
        ),
      );
      return reply.type('text/html; charset=utf-8').send(overviewPage(request.principal!, data));
    },
  );
}
