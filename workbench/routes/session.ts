/** Sign-in and sign-out: POST/DELETE /api/session, and GET /api/session for who is signed in. */
import type { FastifyInstance } from 'fastify';
import { closeSession, signIn } from '../auth/sessions.ts';
import { parseCookies, SESSION_COOKIE, sessionCookie, type WorkbenchContext } from '../context.ts';
import { apiRoute, ERROR } from '../schemas.ts';

export function registerSessionRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.post<{ Body: { username: string; password: string } }>(
    '/api/session',
    apiRoute('public', {
      summary: 'Sign in: sets the session cookie and returns the CSRF token',
      tags: ['session'],
      security: [],
      body: {
        type: 'object',
        required: ['username', 'password'],
        additionalProperties: false,
        properties: {
          username: { type: 'string', maxLength: 200 },
          password: { type: 'string', maxLength: 1000 },
        },
      },
      response: {
        200: { $ref: 'Session#' },
        400: ERROR,
        401: ERROR,
        429: ERROR,
        503: ERROR,
      },
    }),
    async (request, reply) => {
      const result = await signIn(ctx.db, ctx.sessions, ctx.passwordChecks, {
        ...request.body,
        client: request.ip,
      });
      if (!result.ok && result.reason === 'throttled') {
        return reply
          .code(429)
          .header('retry-after', String(result.retryAfterSeconds))
          .send({
            error: 'throttled',
            message: `too many sign-in attempts for this name or from this address: try again in ${result.retryAfterSeconds} s`,
          });
      }
      if (!result.ok)
        return reply.code(401).send({ error: 'unauthenticated', message: 'wrong user name or password' });
      reply.header('set-cookie', sessionCookie(request, result.sessionSecret, ctx.sessions.maxSeconds));
      return {
        username: request.body.username.trim().toLowerCase(),
        role: result.role,
        csrfToken: result.csrfToken,
        expires_at: result.expiresAt,
      };
    },
  );

  app.get(
    '/api/session',
    apiRoute('viewer', {
      summary: 'Who is signed in, and the CSRF token',
      tags: ['session'],
      response: { 200: { $ref: 'Session#' } },
    }),
    async (request) => ({
      username: request.principal!.name,
      role: request.principal!.role,
      csrfToken: request.principal!.csrfToken ?? '',
    }),
  );

  app.delete(
    '/api/session',
    apiRoute('viewer', {
      summary: 'Sign out (needs X-CSRF-Token)',
      tags: ['session'],
      response: { 204: { type: 'null' } },
    }),
    async (request, reply) => {
      const secret = parseCookies(request.headers.cookie)[SESSION_COOKIE];
      if (secret) await closeSession(ctx.db, secret);
      reply.header('set-cookie', sessionCookie(request, '', 0));
      return reply.code(204).send();
    },
  );
}
