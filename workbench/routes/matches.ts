/**
 * Near-miss candidates and manual matches over the API (docs/finance.md, Candidates and Manual
 * matches): the candidates of a discrepancy, a match by ids (1:1, 1:N, N:1), its undo, the list.
 * Matching needs operator; writing a difference off needs admin. A match or an undo is followed by the
 * reconcile run of its items' dates, so the discrepancies it closes are resolved when it answers.
 */
import { ACCOUNT_NAME_PATTERN } from '../../domain/account-name.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAccountName } from '../../domain/account-name.ts';
import { discrepancyCandidates } from '../../reconcile/candidates/read-candidates.ts';
import { matchItems, undoMatch } from '../../reconcile/manual-matches/apply.ts';
import { listManualMatches } from '../../reconcile/manual-matches/read.ts';
import { InvalidMatch, MAX_ITEMS, type MatchOrigin } from '../../reconcile/manual-matches/record.ts';
import { roleAllows } from '../auth/accounts.ts';
import { accountScope } from '../account-scope.ts';
import type { WorkbenchContext } from '../context.ts';
import { apiRoute, ERROR, idParams, objectOf } from '../schemas.ts';

const ids = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_ITEMS,
  items: { type: 'string', minLength: 1, maxLength: 200 },
};
const note = { type: 'string', maxLength: 4000 };
const account = {
  type: 'string',
  maxLength: 32,
  description: 'The provider account of the items (default: your one account, else default).',
};

const matchAnswer = {
  200: objectOf({
    match_id: { type: 'integer' },
    run_id: { type: 'integer', description: 'The reconcile run of the items’ dates that followed.' },
    account: { type: 'string' },
    currency: { type: 'string' },
    difference_cents: { type: 'integer', description: 'Ledger minus provider, in cents of currency.' },
    written_off_cents: { type: 'integer' },
  }),
  404: ERROR,
  409: ERROR,
};

/** The account a match names: the one given (checked), the caller's only account, else default. */
export function matchAccount(request: FastifyRequest, given: string | undefined): string {
  const scope = accountScope(request);
  if (given !== undefined && given !== '') {
    if (!isAccountName(given))
      throw new InvalidMatch(
        `account ${JSON.stringify(given.slice(0, 40))} is not an account name: use 1 to 32 of a-z, 0-9 and -`,
      );
    return given;
  }
  return scope !== 'all' && scope.length === 1 ? scope[0]! : 'default';
}

/** Records a match for the request's principal (the API or the workbench's form). */
export async function matchFromRequest(
  ctx: WorkbenchContext,
  request: FastifyRequest,
  body: {
    account?: string;
    provider_transaction_ids: string[];
    ledger_merchant_transaction_ids: string[];
    note: string;
    write_off_cents?: number;
  },
  origin: MatchOrigin,
) {
  const principal = request.principal!;
  const m = await matchItems(
    ctx.db,
    {
      account: matchAccount(request, body.account),
      providerTransactionIds: body.provider_transaction_ids,
      ledgerMerchantTransactionIds: body.ledger_merchant_transaction_ids,
      note: body.note,
      ...(body.write_off_cents !== undefined ? { writeOffCents: body.write_off_cents } : {}),
      origin,
    },
    {
      name: principal.name,
      accounts: accountScope(request),
      mayWriteOff: roleAllows(principal.role, 'admin'),
    },
  );
  await ctx.reads.wrote(principal);
  return m;
}

export function registerMatchRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  registerMatchActions(app, ctx);
  registerMatchList(app, ctx);
}

/** A discrepancy's candidates, and recording or undoing a manual match. */
function registerMatchActions(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Params: { id: number } }>(
    '/api/discrepancies/:id/candidates',
    apiRoute('viewer', {
      summary:
        'Near-miss candidates of an open missing_in_ledger or missing_at_provider discrepancy, best first',
      tags: ['matches'],
      params: idParams,
      response: { 200: { $ref: 'Candidates#' }, 404: ERROR },
    }),
    async (request) => {
      const found = await discrepancyCandidates(ctx.db, request.params.id, accountScope(request));
      return { candidates: found.candidates };
    },
  );

  app.post<{
    Body: {
      account?: string;
      provider_transaction_ids: string[];
      ledger_merchant_transaction_ids: string[];
      note: string;
      write_off_cents?: number;
    };
  }>(
    '/api/matches',
    apiRoute('operator', {
      summary: 'Match provider transactions with ledger entries by hand (1:1, 1:N, N:1), with a note',
      tags: ['matches'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['provider_transaction_ids', 'ledger_merchant_transaction_ids', 'note'],
        properties: {
          account,
          provider_transaction_ids: ids,
          ledger_merchant_transaction_ids: ids,
          note: { ...note, minLength: 1 },
          write_off_cents: {
            type: 'integer',
            minimum: 0,
            maximum: 999_999_999_999,
            description: 'The difference beyond the tolerance to write off (needs admin).',
          },
        },
      },
      response: matchAnswer,
    }),
    async (request) => {
      const m = await matchFromRequest(ctx, request, request.body, 'api');
      return answer(m);
    },
  );

  app.delete<{ Params: { id: number }; Body: { note: string } }>(
    '/api/matches/:id',
    apiRoute('operator', {
      summary: 'Undo a manual match, with a note: its discrepancies reopen if still found',
      tags: ['matches'],
      params: idParams,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['note'],
        properties: { note: { ...note, minLength: 1 } },
      },
      response: matchAnswer,
    }),
    async (request) => {
      const m = await undoMatch(ctx.db, request.params.id, request.body.note, {
        name: request.principal!.name,
        accounts: accountScope(request),
      });
      await ctx.reads.wrote(request.principal);
      return answer(m);
    },
  );
}

/** The manual matches, newest first. */
function registerMatchList(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get<{ Querystring: { account?: string; active?: boolean; limit?: number } }>(
    '/api/matches',
    apiRoute('viewer', {
      summary: 'Manual matches, newest first (undone ones too unless active=true)',
      tags: ['matches'],
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          account: { type: 'string', pattern: ACCOUNT_NAME_PATTERN.source },
          active: { type: 'boolean' },
          limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
        },
      },
      response: { 200: objectOf({ matches: { $ref: 'Rows#' } }) },
    }),
    async (request) => {
      const q = request.query;
      const matches = await listManualMatches(ctx.db, {
        accounts: accountScope(request),
        ...(q.account ? { account: q.account } : {}),
        ...(q.active ? { active: true } : {}),
        limit: q.limit ?? 100,
      });
      return { matches };
    },
  );
}

function answer(m: Awaited<ReturnType<typeof matchItems>>) {
  return {
    match_id: m.matchId,
    run_id: m.runId,
    account: m.account,
    currency: m.currency,
    difference_cents: m.differenceCents,
    written_off_cents: m.writtenOffCents,
  };
}
