/**
 * Tolerances and write-offs in the workbench (docs/finance.md, "Tolerances and write-offs"): the
 * tolerances of the caller's accounts with their versions (GET /api/tolerances, /tolerances) and one
 * month's write-offs with their totals per currency (GET /api/write-offs, its CSV, /write-offs). Reads
 * only, for viewers; a change goes through the preview (routes/previews.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ACCOUNT_NAME_PATTERN } from '../../domain/account-name.ts';
import { easternDateOf } from '../../domain/time/eastern.ts';
import { writeOffReport, writeOffsCsv } from '../../reconcile/tolerances/write-off-report.ts';
import { accountScope } from '../account-scope.ts';
import type { WorkbenchContext } from '../context.ts';
import { tolerancesPage, writeOffsPage } from '../pages/tolerances.ts';
import { tolerancesInScope } from '../queries/tolerances.ts';
import { apiRoute, objectOf, pageQuery, pageRoute } from '../schemas.ts';

const account = {
  type: 'string',
  pattern: ACCOUNT_NAME_PATTERN.source,
  description: 'One provider account (default: every account you may see).',
};
const month = {
  type: 'string',
  pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$',
  description: 'The Eastern month, YYYY-MM (default: this month).',
};

interface WriteOffsQuery {
  month?: string;
  account?: string;
}

/** The month's write-offs within the caller's accounts: the CLI's report, narrowed to them. */
function readWriteOffs(ctx: WorkbenchContext, request: FastifyRequest<{ Querystring: WriteOffsQuery }>) {
  const scope = accountScope(request);
  const q = request.query;
  return ctx.reads.read(request.principal, (db) =>
    writeOffReport(db, {
      month: q.month?.trim() || easternDateOf(new Date().toISOString()).slice(0, 7),
      account: q.account?.trim() || null,
      visible: scope === 'all' ? null : scope,
    }),
  );
}

export function registerToleranceRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  registerToleranceReads(app, ctx);
  registerWriteOffReads(app, ctx);
}

function registerToleranceReads(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Querystring: { account?: string } }>(
    '/api/tolerances',
    apiRoute('viewer', {
      summary:
        'Tolerances per account and currency: the version in force and every version, with who set it, when and why',
      tags: ['tolerances'],
      querystring: { type: 'object', additionalProperties: false, properties: { account } },
      response: { 200: objectOf({ accounts: { $ref: 'Rows#' } }) },
    }),
    async (request) => ({
      accounts: await ctx.reads.read(request.principal, (db) =>
        tolerancesInScope(db, accountScope(request), request.query.account),
      ),
    }),
  );

  app.get(
    '/tolerances',
    pageRoute('viewer', 'Tolerances per account and currency'),
    async (request, reply) => {
      const accounts = await ctx.reads.read(request.principal, (db) =>
        tolerancesInScope(db, accountScope(request)),
      );
      return reply.type('text/html; charset=utf-8').send(tolerancesPage(request.principal!, accounts));
    },
  );
}

function registerWriteOffReads(app: FastifyInstance, ctx: WorkbenchContext): void {
  const querystring = { type: 'object', additionalProperties: false, properties: { month, account } };
  app.get<{ Querystring: WriteOffsQuery }>(
    '/api/write-offs',
    apiRoute('viewer', {
      summary:
        'Write-offs of an Eastern month, each with its reason, and their totals per currency (never added across currencies)',
      tags: ['tolerances'],
      querystring,
      response: {
        200: objectOf({
          month: { type: 'string' },
          account: { type: ['string', 'null'] },
          totals: { $ref: 'Rows#' },
          lines: { $ref: 'Rows#' },
        }),
      },
    }),
    async (request) => readWriteOffs(ctx, request),
  );

  app.get<{ Querystring: WriteOffsQuery }>(
    '/api/write-offs.csv',
    apiRoute('viewer', {
      summary: 'The same write-offs as CSV: the file recon write-offs --csv writes',
      tags: ['tolerances'],
      produces: ['text/csv'],
      querystring,
    }),
    async (request, reply) => {
      const report = await readWriteOffs(ctx, request);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="write-offs-${report.month}.csv"`)
        .send(writeOffsCsv(report));
    },
  );

  app.get<{ Querystring: WriteOffsQuery }>(
    '/write-offs',
    pageRoute('viewer', 'Write-offs of an Eastern month', {
      querystring: pageQuery({
        month: { type: 'string', maxLength: 40 },
        account: { type: 'string', maxLength: 40 },
      }),
    }),
    async (request, reply) => {
      const report = await readWriteOffs(ctx, request);
      return reply.type('text/html; charset=utf-8').send(writeOffsPage(request.principal!, report));
    },
  );
}
