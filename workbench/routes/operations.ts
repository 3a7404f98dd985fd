/** Reconcile runs, loads, and the coverage calendar. */
import type { FastifyInstance } from 'fastify';
import { addDays, daysInclusive, isValidDate } from '../../domain/time/calendar.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { accountScope } from '../account-scope.ts';
import { coverage, listLoads, listRuns } from '../queries/operations.ts';
import { apiRoute, MAX_ID, objectOf } from '../schemas.ts';
import type { WorkbenchContext } from '../context.ts';

const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    before: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_ID,
      description: 'Only ids below this one (the next page).',
    },
  },
};

/** The default coverage range: the last 35 Eastern days up to today. */
export function defaultCoverageRange(now = new Date()): { from: string; to: string } {
  const to = easternDateOf(now.toISOString());
  return { from: addDays(to, -34), to };
}

export function registerOperationsRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  registerRunsAndLoads(app, ctx);
  registerScheduleRoute(app, ctx);
  registerCoverageRoute(app, ctx);
}

/** GET /api/runs and /api/loads: newest first, a page at a time. */
const PAGED_LISTS = [
  {
    path: '/api/runs',
    summary: 'Reconcile runs, newest first, with their summaries (counts by kind)',
    list: listRuns,
  },
  { path: '/api/loads', summary: 'Loads, newest first, with their row counts and status', list: listLoads },
];

function registerRunsAndLoads(app: FastifyInstance, ctx: WorkbenchContext): void {
  for (const { path, summary, list } of PAGED_LISTS)
    app.get<{ Querystring: { limit: number; before?: number } }>(
      path,
      apiRoute('viewer', {
        summary,
        tags: ['operations'],
        querystring: pageQuery,
        response: { 200: objectOf({ items: { $ref: 'Rows#' } }) },
      }),
      async (request) => ({
        items: await ctx.reads.read(request.principal, (db) =>
          list(db, request.query, accountScope(request)),
        ),
      }),
    );
}

/** GET /api/schedule: the nightly schedule as Temporal knows it. */
function registerScheduleRoute(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get(
    '/api/schedule',
    apiRoute('viewer', {
      summary:
        "The nightly schedule's state, next runs and last runs with their status, from Temporal when reachable",
      tags: ['operations'],
      response: {
        200: objectOf({
          schedule_id: { type: 'string' },
          reachable: { type: 'boolean' },
          message: { type: 'string' },
          paused: { type: 'boolean' },
          note: { type: 'string' },
          next: { type: 'array', items: { type: 'string' } },
          recent: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                scheduled_at: { type: 'string' },
                workflow_id: { type: 'string' },
                status: { type: 'string' },
              },
            },
          },
        }),
      },
    }),
    async () => ctx.schedule(),
  );
}

/** GET /api/coverage: per Eastern day and source, over at most 400 days (default the last 35). */
function registerCoverageRoute(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Querystring: { from?: string; to?: string } }>(
    '/api/coverage',
    apiRoute('viewer', {
      summary: 'Per Eastern day and source: loads, failures, missing business days, reconcile runs',
      tags: ['operations'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } },
      },
      response: {
        200: objectOf({
          from: { type: 'string' },
          to: { type: 'string' },
          sources: { type: 'array', items: { type: 'string' } },
          days: { $ref: 'Rows#' },
        }),
      },
    }),
    async (request, reply) => {
      for (const [name, day] of Object.entries(request.query))
        if (day !== undefined && !isValidDate(day))
          return reply
            .code(400)
            .send({ error: 'bad_request', message: `${name}=${day} is not a date: use YYYY-MM-DD` });
      const d = defaultCoverageRange();
      const to = request.query.to ?? d.to;
      const from = request.query.from ?? addDays(to, -34);
      if (from > to)
        return reply.code(400).send({ error: 'bad_request', message: `from=${from} is after to=${to}` });
      if (daysInclusive(from, to) > 401)
        return reply
          .code(400)
          .send({ error: 'bad_request', message: 'the range is longer than 400 days: narrow it' });
      return {
        from,
        to,
        ...(await ctx.reads.read(request.principal, (db) => coverage(db, from, to, accountScope(request)))),
      };
    },
  );
}
