/**
 * JSON schemas shared by the routes: they validate requests, shape responses, and make the OpenAPI
 * document (GET /api/openapi.json); and the options every route is registered with (apiRoute,
 * pageRoute): the least role it needs and its schema.
 */
import type { FastifyInstance } from 'fastify';
import type { Role } from './auth/accounts.ts';

const nullable = (type: string) => ({ type: [type, 'null'] });
const anyObject = { type: 'object', additionalProperties: true };

export const schemas = [
  {
    $id: 'Error',
    type: 'object',
    required: ['error', 'message'],
    properties: { error: { type: 'string' }, message: { type: 'string' } },
  },
  {
    $id: 'Health',
    type: 'object',
    properties: { alive: { type: 'boolean' }, ready: { type: 'boolean' }, database: { type: 'string' } },
  },
  {
    $id: 'Session',
    type: 'object',
    required: ['username', 'role', 'csrfToken'],
    properties: {
      username: { type: 'string' },
      role: { type: 'string', enum: ['viewer', 'operator', 'admin'] },
      csrfToken: {
        type: 'string',
        description: 'Send back as the X-CSRF-Token header on every state change.',
      },
      expires_at: { type: 'string', format: 'date-time' },
    },
  },
  {
    $id: 'WorklistItem',
    type: 'object',
    properties: {
      id: { type: 'integer' },
      account: { type: 'string', description: 'Provider account the discrepancy belongs to.' },
      kind: { type: 'string' },
      rule: { type: 'string' },
      status: { type: 'string', enum: ['open', 'acknowledged', 'resolved'] },
      business_date: nullable('string'),
      currency: nullable('string'),
      expected_amount_cents: nullable('integer'),
      actual_amount_cents: nullable('integer'),
      difference_cents: nullable('integer'),
      stake_cents: {
        type: 'integer',
        description: 'Money at stake in cents of currency; orders the worklist.',
      },
      transaction_id: nullable('string'),
      merchant_transaction_id: nullable('string'),
      return_transaction_id: nullable('string'),
      assignee: nullable('string'),
      first_seen_at: { type: 'string' },
      acknowledged_by: nullable('string'),
      resolution: nullable('string'),
    },
  },
  {
    $id: 'Total',
    type: 'object',
    properties: {
      account: { type: 'string' },
      kind: { type: 'string' },
      currency: nullable('string'),
      count: { type: 'integer' },
      cents: { type: 'integer', description: 'Money at stake, in cents of currency.' },
    },
  },
  {
    $id: 'Worklist',
    type: 'object',
    required: ['items', 'next_cursor', 'totals'],
    properties: {
      items: { type: 'array', items: { $ref: 'WorklistItem#' } },
      next_cursor: {
        ...nullable('string'),
        description: 'Pass as cursor= for the next page; null at the end.',
      },
      totals: {
        type: ['array', 'null'],
        items: { $ref: 'Total#' },
        description:
          'By account, kind and currency over the whole filter; on the first page (no cursor) only, null after.',
      },
    },
  },
  {
    $id: 'Detail',
    type: 'object',
    properties: {
      discrepancy: anyObject,
      evidence: {
        type: 'object',
        properties: Object.fromEntries(
          ['provider', 'ledger', 'notifications', 'returns', 'legacy', 'loads'].map((k) => [
            k,
            { type: 'array', items: anyObject },
          ]),
        ),
      },
      diff: {
        type: 'object',
        properties: {
          expected_side: { type: 'string' },
          actual_side: { type: 'string' },
          fields: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                field: { type: 'string' },
                expected: {},
                actual: {},
                differs: { type: 'boolean' },
              },
            },
          },
        },
      },
      rule: {
        type: 'object',
        properties: Object.fromEntries(
          ['rule', 'kind', 'compares', 'means', 'todo', 'expected', 'actual'].map((k) => [
            k,
            { type: 'string' },
          ]),
        ),
      },
      events: { type: 'array', items: anyObject },
    },
  },
  {
    $id: 'Candidates',
    type: 'object',
    required: ['candidates'],
    properties: {
      candidates: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            side: { type: 'string', enum: ['provider', 'ledger'] },
            id: {
              type: 'string',
              description: 'A provider transaction_id (side provider) or a ledger merchant_transaction_id.',
            },
            rank: { type: 'integer' },
            score: { type: 'integer', description: 'For ordering only; not a probability.' },
            amount_cents: { type: 'integer' },
            currency: { type: 'string' },
            business_date: { type: 'string' },
            merchant_transaction_id: nullable('string'),
            discrepancy_id: { ...nullable('integer'), description: 'The candidate’s own open discrepancy.' },
            checks: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  check: { type: 'string', enum: ['amount', 'business_date', 'merchant_user', 'id'] },
                  passed: { type: 'boolean' },
                  detail: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
  },
  { $id: 'Rows', type: 'array', items: anyObject },
];

export function addSchemas(app: FastifyInstance): void {
  for (const s of schemas) app.addSchema(s);
}

/** The largest id or count a parameter takes: beyond it, a 400 (never a float or an overflow). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A JSON object of these properties (an answer, or a part of one). */
export const objectOf = (properties: object) => ({ type: 'object', properties });

/** An error answer ({ error, message }). */
export const ERROR = { $ref: 'Error#' } as const;

/** The error answers every authenticated route can give. */
export const errorResponses = { 400: ERROR, 401: ERROR, 403: ERROR };

/** The path parameter of one row by its id (a discrepancy, a match, settings). */
export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: MAX_ID } },
};

/** A JSON API route's schema: what the OpenAPI document says of it, and what is validated. */
interface ApiSchema {
  readonly summary: string;
  readonly tags: readonly string[];
  readonly querystring?: object;
  readonly params?: object;
  readonly body?: object;
  readonly produces?: readonly string[];
  readonly security?: readonly Record<string, readonly string[]>[];
  /** The answers by status; an authenticated route's get {@link errorResponses} beside them. */
  readonly response?: Readonly<Record<number, object>>;
}

/**
 * A JSON API route's options: the least role it needs (server.ts refuses everyone below it) and its
 * schema. A public route (sign-in, health) says every answer it gives itself.
 */
export function apiRoute(role: Role | 'public', schema: ApiSchema) {
  const { response, ...rest } = schema;
  if (response === undefined || role === 'public') return { config: { role }, schema };
  return { config: { role }, schema: { ...rest, response: { ...response, ...errorResponses } } };
}

/** The worklist filter as query parameters (GET /api/discrepancies, its CSV, and bulk by filter). */
export const filterProperties = {
  status: {
    type: 'string',
    enum: ['unresolved', 'open', 'acknowledged', 'resolved', 'all'],
    description: 'Default unresolved (open or acknowledged).',
  },
  kind: { type: 'string', description: 'One kind, or several separated by commas.' },
  account: {
    type: 'string',
    description: 'One provider account name (1 to 32 of a-z, 0-9 and -).',
  },
  currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
  from: { type: 'string', format: 'date', description: 'First business date, YYYY-MM-DD.' },
  to: { type: 'string', format: 'date', description: 'Last business date, YYYY-MM-DD.' },
  assignee: { type: 'string', description: 'A user name, or none for unassigned.' },
  min_cents: {
    type: 'integer',
    minimum: 0,
    maximum: 999_999_999_999_999,
    description: 'Money at stake of at least this many cents.',
  },
  q: {
    type: 'string',
    description: 'Exact transaction id, merchant transaction id, return id, or discrepancy id.',
  },
};

/**
 * A page's schema: in the OpenAPI document (tag pages, text/html), so that the generated fuzz test
 * reaches its parameters too; unknown query parameters are let through (links keep working).
 */
export function pageSchema(summary: string, parts: { querystring?: object; params?: object } = {}) {
  return { summary, tags: ['pages'], produces: ['text/html'], ...parts } as const;
}
export const pageQuery = (properties: object) => ({ type: 'object', properties });

/** A page's path parameter of one row by its id, as typed (a wrong one is a page that says so). */
export const pageIdParams = { type: 'object', properties: { id: { type: 'string', maxLength: 40 } } };

/** A page's options: the least role it needs (a visitor below it is sent to sign in) and {@link pageSchema}. */
export function pageRoute(role: Role, summary: string, parts?: Parameters<typeof pageSchema>[1]) {
  return { config: { role, page: true }, schema: pageSchema(summary, parts) };
}
