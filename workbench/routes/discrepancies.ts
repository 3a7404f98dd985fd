/** The worklist, one discrepancy with its evidence, the actions on it, bulk actions, CSV export. */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import {
  actOnDiscrepancy,
  bulkAct,
  RESOLUTIONS,
  type Action,
} from '../../reconcile/discrepancies/actions.ts';
import {
  csvHeader,
  csvLine,
  DISCREPANCY_CSV_COLUMNS,
  worklistItem,
} from '../../reconcile/discrepancies/columns.ts';
import { discrepancyDetail } from '../../reconcile/discrepancies/detail.ts';
import { accountScope, scopedFilter } from '../account-scope.ts';
import { worklistAll, worklistPage, worklistTotals } from '../../reconcile/discrepancies/read.ts';
import { apiRoute, ERROR, filterProperties, idParams, MAX_ID, objectOf } from '../schemas.ts';
import type { WorkbenchContext } from '../context.ts';

const eventResponse = {
  200: objectOf({ event_id: { type: 'integer' } }),
  404: ERROR,
  409: ERROR,
};

export function registerDiscrepancyRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  registerWorklistRoutes(app, ctx);
  registerActionRoutes(app, ctx);
  registerBulkRoute(app, ctx);
}

/** The worklist (a page of it, with its totals), the whole of it as CSV, and one discrepancy. */
function registerWorklistRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Querystring: Record<string, string> & { limit?: number; cursor?: string } }>(
    '/api/discrepancies',
    apiRoute('viewer', {
      summary: 'The worklist: per currency, money at stake first, then the oldest; keyed paging',
      tags: ['discrepancies'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...filterProperties,
          limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
          cursor: { type: 'string', maxLength: 400 },
        },
      },
      response: { 200: { $ref: 'Worklist#' } },
    }),
    async (request) => {
      const { limit, cursor, ...rest } = request.query;
      const filter = scopedFilter(request, rest);
      const [page, totals] = await ctx.reads.read(request.principal, (db) =>
        Promise.all([
          worklistPage(db, filter, { limit: limit ?? 50, ...(cursor ? { cursor } : {}) }),
          cursor ? Promise.resolve(null) : worklistTotals(db, filter),
        ]),
      );
      return { items: page.items.map(worklistItem), next_cursor: page.next_cursor, totals };
    },
  );

  app.get<{ Querystring: Record<string, string> }>(
    '/api/discrepancies.csv',
    apiRoute('viewer', {
      summary: 'The whole filtered worklist as CSV, in worklist order',
      tags: ['discrepancies'],
      produces: ['text/csv'],
      querystring: { type: 'object', additionalProperties: false, properties: filterProperties },
    }),
    async (request, reply) => {
      const filter = scopedFilter(request, request.query);
      // The first rows are read before the answer starts: a query that fails fails with its status,
      // not as a 200 whose connection drops after the header line.
      const stream = ctx.reads.stream(request.principal, (db) => worklistAll(db, filter));
      const rows = stream[Symbol.asyncIterator]();
      const first = await rows.next();
      async function* lines() {
        yield csvHeader(DISCREPANCY_CSV_COLUMNS);
        for (let row = first; !row.done; row = await rows.next())
          yield csvLine(DISCREPANCY_CSV_COLUMNS, row.value);
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="discrepancies.csv"')
        .send(Readable.from(lines()));
    },
  );

  app.get<{ Params: { id: number } }>(
    '/api/discrepancies/:id',
    apiRoute('viewer', {
      summary: 'One discrepancy: evidence, field-level diff, the rule in plain words, events',
      tags: ['discrepancies'],
      params: idParams,
      response: { 200: { $ref: 'Detail#' }, 404: ERROR },
    }),
    async (request) => discrepancyDetail(ctx.db, request.params.id, accountScope(request)),
  );
}

const note = { type: 'string', maxLength: 4000, default: '' };
const ACTIONS: {
  path: string;
  summary: string;
  body: object;
  toAction: (b: Record<string, unknown>) => Action;
}[] = [
  {
    path: 'ack',
    summary: 'Acknowledge, with a note',
    body: { note },
    toAction: (b) => ({ action: 'ack', note: String(b.note ?? '') }),
  },
  {
    path: 'assign',
    summary: 'Assign to a workbench user (null to unassign)',
    body: { user: { type: ['string', 'null'], maxLength: 64 } },
    toAction: (b) => ({
      action: 'assign',
      user: typeof b.user === 'string' && b.user !== '' ? b.user : null,
    }),
  },
  {
    path: 'comment',
    summary: 'Comment',
    body: { text: { type: 'string', minLength: 1, maxLength: 4000 } },
    toAction: (b) => ({ action: 'comment', text: String(b.text) }),
  },
  {
    path: 'resolve',
    summary: 'Resolve with a reason: accepted, fixed_in_ledger (verified by the next run), provider_error',
    body: { reason: { type: 'string', enum: [...RESOLUTIONS] }, note },
    toAction: (b) => ({
      action: 'resolve',
      reason: b.reason as (typeof RESOLUTIONS)[number],
      note: String(b.note ?? ''),
    }),
  },
  {
    path: 'reopen',
    summary: 'Reopen a resolved discrepancy',
    body: { note },
    toAction: (b) => ({ action: 'reopen', note: String(b.note ?? '') }),
  },
];

/** POST /api/discrepancies/:id/ack, assign, comment, resolve and reopen ({@link ACTIONS}). */
function registerActionRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  for (const a of ACTIONS) {
    const required =
      a.path === 'comment'
        ? ['text']
        : a.path === 'resolve'
          ? ['reason']
          : a.path === 'assign'
            ? ['user']
            : [];
    app.post<{ Params: { id: number }; Body: Record<string, unknown> }>(
      `/api/discrepancies/:id/${a.path}`,
      apiRoute('operator', {
        summary: a.summary,
        tags: ['actions'],
        params: idParams,
        body: { type: 'object', additionalProperties: false, required, properties: a.body },
        response: eventResponse,
      }),
      async (request) => {
        const act = a.toAction(request.body ?? {});
        const done = await actOnDiscrepancy(ctx.db, request.params.id, act, {
          name: request.principal!.name,
          accounts: accountScope(request),
        });
        ctx.metrics.discrepancyActions.inc({ action: act.action, via: 'single' });
        await ctx.reads.wrote(request.principal);
        return done;
      },
    );
  }
}

/** POST /api/discrepancies/bulk: acknowledge or assign a list of ids or a filter's discrepancies. */
function registerBulkRoute(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.post<{
    Body: {
      ids?: number[];
      filter?: Record<string, string>;
      action: 'ack' | 'assign';
      note?: string;
      user?: string | null;
    };
  }>(
    '/api/discrepancies/bulk',
    apiRoute('operator', {
      summary: 'Acknowledge or assign every unresolved discrepancy of a list of ids or of a filter',
      tags: ['actions'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['action'],
        properties: {
          ids: { type: 'array', items: { type: 'integer', minimum: 1, maximum: MAX_ID }, maxItems: 10000 },
          filter: { type: 'object', additionalProperties: false, properties: filterProperties },
          action: { type: 'string', enum: ['ack', 'assign'] },
          note: { type: 'string', maxLength: 4000 },
          user: { type: ['string', 'null'], maxLength: 64 },
        },
      },
      response: {
        200: objectOf({ count: { type: 'integer' } }),
        409: ERROR,
      },
    }),
    async (request, reply) => {
      const b = request.body;
      if ((b.ids === undefined) === (b.filter === undefined))
        return reply.code(400).send({ error: 'bad_request', message: 'give either ids or filter' });
      const selection = b.ids
        ? { ids: b.ids }
        : {
            filter: scopedFilter(
              request,
              Object.fromEntries(Object.entries(b.filter!).map(([k, v]) => [k, String(v)])),
            ),
          };
      const act =
        b.action === 'ack'
          ? { action: 'ack' as const, note: b.note ?? '' }
          : { action: 'assign' as const, user: b.user ? b.user : null };
      const done = await bulkAct(ctx.db, selection, act, {
        name: request.principal!.name,
        accounts: accountScope(request),
      });
      ctx.metrics.discrepancyActions.inc({ action: act.action, via: 'bulk' }, done.count);
      await ctx.reads.wrote(request.principal);
      return done;
    },
  );
}
