/**
 * Previewing and applying a change of tolerances from the workbench (docs/finance.md, "The preview
 * page"; the same functions as `recon rules preview` and `recon tolerances apply`):
 * - POST /api/tolerances/previews (operator): starts a preview of a proposal (rows, or the settings
 *   file's text) and answers 202 at once; the preview runs in this process (preview-jobs.ts);
 * - GET /api/tolerances/previews/{id} and its page: running, failed with why, or the result;
 * - POST /api/tolerances/settings/{id}/apply (admin): applies a proposal that was previewed, recorded
 *   with who applied it.
 * Every account a proposal names must be one of the caller's; a preview or settings naming another
 * does not exist for the caller (404).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ACCOUNT_NAME_PATTERN } from '../../domain/account-name.ts';
import { snakeCased } from '../../domain/snake-cased.ts';
import type { AccountScope } from '../../reconcile/discrepancies/filter.ts';
import { applySettings } from '../../reconcile/tolerances/apply.ts';
import { parseSettingsFile, type SettingsProposal } from '../../reconcile/tolerances/settings-file.ts';
import { storedProposal } from '../../reconcile/tolerances/stored-proposal.ts';
import { InvalidTolerance } from '../../reconcile/tolerances/tolerance.ts';
import { accountScope } from '../account-scope.ts';
import type { WorkbenchContext } from '../context.ts';
import { errorPage } from '../pages/error.ts';
import { previewFormPage, previewJobPage } from '../pages/preview.ts';
import type { PreviewJob } from '../preview-jobs.ts';
import { tolerancesInScope } from '../queries/tolerances.ts';
import { apiRoute, ERROR, idParams, objectOf, pageIdParams, pageRoute } from '../schemas.ts';

const figure = { type: 'integer', minimum: 0, maximum: 999_999_999_999 };

const proposalBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    note: { type: 'string', maxLength: 4000, description: 'Why, recorded with the proposal.' },
    tolerances: {
      type: 'array',
      maxItems: 200,
      description: 'One entry per account and currency; a missing figure is 0. Or give settings_file.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['currency'],
        properties: {
          account: { type: 'string', pattern: ACCOUNT_NAME_PATTERN.source },
          currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
          amount_tolerance_cents: figure,
          date_lag_business_days: { ...figure, maximum: 366 },
          write_off_limit_cents: figure,
        },
      },
    },
    settings_file: {
      type: 'string',
      maxLength: 200_000,
      description:
        'The text of the settings file recon rules preview --settings reads, instead of tolerances.',
    },
  },
};

interface ProposalBody {
  note?: string;
  tolerances?: Record<string, unknown>[];
  settings_file?: string;
}

const jobParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[0-9a-f-]{36}$' } },
};

/** The proposal of a request, parsed by the settings file's own parser, within the caller's accounts. */
function proposalOf(body: ProposalBody, scope: AccountScope): SettingsProposal {
  const file = body.settings_file?.trim() ? body.settings_file : undefined;
  if (file !== undefined && body.tolerances !== undefined)
    throw new InvalidTolerance('give either tolerances or settings_file, not both');
  if (file === undefined && body.tolerances === undefined)
    throw new InvalidTolerance('give tolerances (one per account and currency) or settings_file');
  const text =
    file ??
    JSON.stringify({
      ...(body.note?.trim() ? { note: body.note.trim() } : {}),
      tolerances: body.tolerances!.map((t) => ({
        ...t,
        ...(typeof t.currency === 'string' ? { currency: t.currency.toUpperCase() } : {}),
      })),
    });
  const proposal = parseSettingsFile(text, file === undefined ? 'the proposal' : 'the settings file');
  const outside = proposal.tolerances.map((t) => t.account).filter((a) => !within(scope, [a]));
  if (outside.length > 0)
    throw new InvalidTolerance(
      `account ${outside[0]} is not one of yours: propose tolerances of your accounts only`,
    );
  return proposal;
}

const within = (scope: AccountScope, accounts: readonly string[]) =>
  scope === 'all' || accounts.every((a) => (scope as readonly string[]).includes(a));

/** The job of `id` if the caller may see every account it names. */
function jobFor(ctx: WorkbenchContext, request: FastifyRequest, id: string): PreviewJob | undefined {
  const job = ctx.previews.get(id);
  return job && within(accountScope(request), job.accounts) ? job : undefined;
}

const notFound = (id: string) => ({
  error: 'not_found',
  message: `no preview ${id.slice(0, 40)} in this server: previews are kept until it restarts; run it again`,
});

function jobAnswer(job: PreviewJob) {
  return {
    preview_id: job.id,
    ...snakeCased(job, ['status', 'by', 'accounts', 'startedAt', 'finishedAt', 'message', 'preview']),
    page: `/tolerances/previews/${job.id}`,
  };
}

const jobSchema = {
  type: 'object',
  properties: {
    preview_id: { type: 'string' },
    status: { type: 'string', enum: ['running', 'done', 'failed'] },
    by: { type: 'string' },
    accounts: { type: 'array', items: { type: 'string' } },
    started_at: { type: 'string' },
    finished_at: { type: ['string', 'null'] },
    message: { type: ['string', 'null'], description: 'Why it failed.' },
    page: { type: 'string' },
    preview: {
      type: ['object', 'null'],
      additionalProperties: true,
      description:
        'When done: settingsId (to apply), accounts, totals per account, kind, currency and change (open, write_off, close, agree, disagree) with count and cents, the first items, itemCount.',
    },
  },
};

export function registerPreviewRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  registerPreviewApi(app, ctx);
  registerApply(app, ctx);
  registerPreviewPages(app, ctx);
}

function registerPreviewApi(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.post<{ Body: ProposalBody }>(
    '/api/tolerances/previews',
    apiRoute('operator', {
      summary:
        'Preview proposed tolerances over the whole history (as recon rules preview): answers 202 at once; ask the preview for its state',
      tags: ['tolerances'],
      body: proposalBody,
      response: { 202: jobSchema, 409: ERROR },
    }),
    async (request, reply) => {
      const proposal = proposalOf(request.body, accountScope(request));
      const job = ctx.previews.start(proposal, request.principal!.name);
      return reply.code(202).send(jobAnswer(job));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/tolerances/previews/:id',
    apiRoute('viewer', {
      summary: 'A preview: running, failed with why, or done with what would change',
      tags: ['tolerances'],
      params: jobParams,
      response: { 200: jobSchema, 404: ERROR },
    }),
    async (request, reply) => {
      const job = jobFor(ctx, request, request.params.id);
      return job ? jobAnswer(job) : reply.code(404).send(notFound(request.params.id));
    },
  );
}

function registerApply(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.post<{ Params: { id: number } }>(
    '/api/tolerances/settings/:id/apply',
    apiRoute('admin', {
      summary:
        'Apply previewed settings (as recon tolerances apply): each account they name gets its next tolerances version, recorded with who applied it',
      tags: ['tolerances'],
      params: idParams,
      response: {
        200: objectOf({
          settings_id: { type: 'integer' },
          versions: {
            type: 'object',
            additionalProperties: { type: 'integer' },
            description: 'The new tolerances version of each account.',
          },
        }),
        404: ERROR,
      },
    }),
    async (request, reply) => {
      const stored = await storedProposal(ctx.db, request.params.id);
      if (!stored || !within(accountScope(request), stored.accounts))
        return reply.code(404).send({
          error: 'not_found',
          message: `no settings ${request.params.id}: preview a proposal first`,
        });
      const r = await applySettings(ctx.db, stored.proposal, request.principal!.name);
      await ctx.reads.wrote(request.principal);
      return { settings_id: r.settingsId, versions: r.versions };
    },
  );
}

function registerPreviewPages(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get(
    '/tolerances/preview',
    pageRoute('operator', 'Propose tolerances and preview them over the whole history'),
    async (request, reply) => {
      const scope = accountScope(request);
      const known = (await tolerancesInScope(ctx.db, scope)).map((a) => a.account);
      const accounts = scope === 'all' ? (known.length ? known : ['default']) : scope;
      return reply.type('text/html; charset=utf-8').send(previewFormPage(request.principal!, accounts));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/tolerances/previews/:id',
    pageRoute('viewer', 'One preview of tolerances', { params: pageIdParams }),
    async (request, reply) => {
      const job = jobFor(ctx, request, request.params.id);
      if (!job)
        return reply
          .code(404)
          .type('text/html; charset=utf-8')
          .send(errorPage(request.principal, 'No such preview', notFound(request.params.id).message));
      const stored = job.preview ? await storedProposal(ctx.db, job.preview.settingsId) : undefined;
      return reply.type('text/html; charset=utf-8').send(previewJobPage(request.principal!, job, stored));
    },
  );
}
