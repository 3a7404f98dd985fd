/** /health (alive and ready, separately) and /metrics (Prometheus text, from prom-client's registry). */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { seesEveryAccount } from '../account-scope.ts';
import type { WorkbenchContext } from '../context.ts';
import { apiRoute } from '../schemas.ts';

export function registerSystemRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get(
    '/health',
    apiRoute('public', {
      summary: 'Liveness and readiness: 200 when the warehouse answers, 503 (still alive) when it does not',
      tags: ['system'],
      security: [],
      response: {
        200: { $ref: 'Health#' },
        503: { $ref: 'Health#' },
      },
    }),
    async (_request, reply) => {
      let ready = true;
      try {
        await sql`select 1`.execute(ctx.db);
      } catch {
        ready = false;
      }
      return reply
        .code(ready ? 200 : 503)
        .send({ alive: true, ready, database: ready ? 'ok' : 'unreachable' });
    },
  );

  app.get(
    '/metrics',
    apiRoute('viewer', {
      summary:
        'Prometheus metrics: requests by route pattern and their durations, discrepancy actions, open discrepancies by kind, currency and status, process metrics',
      tags: ['system'],
      produces: ['text/plain'],
    }),
    async (request, reply) => {
      // The gauges count every account's discrepancies: not for a principal limited to some.
      if (!seesEveryAccount(request))
        return reply.code(403).send({
          error: 'forbidden',
          message: 'the metrics cover every account: use a token that is not limited to accounts',
        });
      const { registry } = ctx.metrics;
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
}
