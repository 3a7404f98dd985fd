/**
 * Checks every request's values before any route sees them, and the headers of every answer.
 *
 * - A NUL character or a lone UTF-16 surrogate anywhere in the query, the path parameters or the
 *   JSON body is refused with a 400 naming where: PostgreSQL can store neither in text or jsonb, so
 *   they would otherwise fail deep inside a statement.
 * - A number that is not finite or past 2^53 (what "Infinity" or "1e309" coerce to) is refused with a
 *   400 after validation, before any statement sees it.
 * - Every error answer is one line.
 * - Every answer that is not a static asset carries `Cache-Control: no-store`, and every answer
 *   `X-Content-Type-Options: nosniff`: data (JSON, CSV, pages) stays out of shared caches and is
 *   never sniffed into something runnable.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first place in `value` that holds a string PostgreSQL cannot store, e.g. `body.note`. */
export function unstorableString(value: unknown, at: string, depth = 0): string | undefined {
  if (typeof value === 'string')
    return value.includes('\u0000') || LONE_SURROGATE.test(value) ? at : undefined;
  if (depth > 32) return at;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableString(value[i], `${at}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const found =
        unstorableString(k, `${at} key`, depth + 1) ?? unstorableString(v, `${at}.${k}`, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** The first place in `value` that holds a number no id, count or amount can be (Infinity, NaN, 2^53 on). */
export function unusableNumber(value: unknown, at: string, depth = 0): string | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER ? undefined : at;
  if (depth > 32 || value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = unusableNumber(v, Array.isArray(value) ? `${at}[${k}]` : `${at}.${k}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Whitespace runs (newlines too) as one space, and at most 300 characters: one line. */
export function oneLine(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** A hook that refuses a request whose query, path or body `find` finds a bad value in, saying where. */
function refuseWhere(find: (value: unknown, at: string) => string | undefined, why: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const where = find(request.query, 'query') ?? find(request.params, 'path') ?? find(request.body, 'body');
    if (where) return reply.code(400).send({ error: 'bad_request', message: `${where} ${why}` });
  };
}

export function addInputChecks(app: FastifyInstance): void {
  app.addHook(
    'preValidation',
    refuseWhere(unstorableString, 'holds a NUL character or a lone surrogate, which no value may: remove it'),
  );
  // After validation, which coerces query strings such as "Infinity" into numbers.
  app.addHook(
    'preHandler',
    refuseWhere(
      unusableNumber,
      `is not a whole number this server can use: give at most ${Number.MAX_SAFE_INTEGER}`,
    ),
  );

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!request.url.startsWith('/assets/')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
