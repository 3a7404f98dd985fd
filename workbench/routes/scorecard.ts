/** The provider scorecard: GET /api/scorecard (JSON) and /scorecard (the page). */
import { isAccountName } from '../../domain/account-name.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { addDays, daysInclusive, isValidDate } from '../../domain/time/calendar.ts';
import { scorecardPage } from '../pages/scorecard.ts';
import { scorecard } from '../queries/scorecard.ts';
import { accountScope } from '../account-scope.ts';
import { apiRoute, objectOf, pageQuery, pageRoute } from '../schemas.ts';
import type { WorkbenchContext } from '../context.ts';
import { defaultCoverageRange } from './operations.ts';

/** The longest range one request may ask for, in days. */
const MAX_DAYS = 400;

interface ScorecardQuery {
  from?: string;
  to?: string;
  account?: string;
}

/** The range and account asked for, or the message of a 400. Default: the last 35 Eastern days. */
function parseQuery(q: ScorecardQuery): { from: string; to: string; account?: string } | string {
  // Checked before the default range is counted from them: 0000-01-01 has no day before it.
  for (const day of [q.from, q.to])
    if (day !== undefined && !isValidDate(day)) return 'from and to are dates: write them YYYY-MM-DD';
  const to = q.to ?? defaultCoverageRange().to;
  const from = q.from ?? addDays(to, -34);
  if (from > to) return `from=${from} is after to=${to}`;
  if (daysInclusive(from, to) > MAX_DAYS) return `the range is longer than ${MAX_DAYS} days: narrow it`;
  const account = q.account?.trim() || undefined;
  if (account !== undefined && !isAccountName(account))
    return 'account is a provider account name: 1 to 32 of a-z, 0-9 and -';
  return { from, to, ...(account === undefined ? {} : { account }) };
}

function badRequest(reply: FastifyReply, message: string) {
  return reply.code(400).send({ error: 'bad_request', message });
}

export function registerScorecardRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Querystring: ScorecardQuery }>(
    '/api/scorecard',
    apiRoute('viewer', {
      summary:
        'Provider scorecard per account, source and Eastern day: rows, how late the data arrived, notification delays (p50, p95), rows not in the sibling source',
      tags: ['operations'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          from: { type: 'string', format: 'date' },
          to: { type: 'string', format: 'date' },
          account: { type: 'string' },
        },
      },
      response: {
        200: objectOf({ from: { type: 'string' }, to: { type: 'string' }, items: { $ref: 'Rows#' } }),
      },
    }),
    async (request, reply) => {
      const q = parseQuery(request.query);
      if (typeof q === 'string') return badRequest(reply, q);
      const items = await ctx.reads.read(request.principal, (db) => scorecard(db, q, accountScope(request)));
      return { from: q.from, to: q.to, items };
    },
  );

  app.get<{ Querystring: ScorecardQuery }>(
    '/scorecard',
    pageRoute('viewer', 'The provider scorecard', {
      querystring: pageQuery({
        from: { type: 'string' },
        to: { type: 'string' },
        account: { type: 'string' },
      }),
    }),
    async (request, reply) => {
      const q = parseQuery(request.query);
      if (typeof q === 'string') return reply.code(400).type('text/plain').send(q);
      const items = await ctx.reads.read(request.principal, (db) => scorecard(db, q, accountScope(request)));
      return reply.type('text/html; charset=utf-8').send(scorecardPage(request.principal!, { ...q, items }));
    },
  );
}
