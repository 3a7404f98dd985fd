/** /health (alive and ready, separately) and /metrics (Prometheus text). */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { WorkbenchContext } from '../server.ts';

export interface Metrics {
  /** Requests by "METHOD route status". */
  requests: Map<string, number>;
  started: number;
}

export function registerSystemRoutes(app: FastifyInstance, ctx: WorkbenchContext): void {
  app.get(
    '/health',
    {
      config: { role: 'public' },
      schema: {
        summary: 'Liveness and readiness: 200 when the warehouse answers, 503 (still alive) when it does not',
        tags: ['system'],
        security: [],
        response: {
          200: { $ref: 'Health#' },
          503: { $ref: 'Health#' },
        },
      },
    },
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
    {
      config: { role: 'viewer' },
      schema: { summary: 'Prometheus metrics of this process', tags: ['system'], produces: ['text/plain'] },
    },
    async (_request, reply) => {
      const lines = [
        '# HELP recon_workbench_requests_total Requests answered, by method, route and status.',
        '# TYPE recon_workbench_requests_total counter',
      ];
      for (const [key, n] of ctx.metrics.requests) {
        const [method, route, status] = key.split(' ');
        lines.push(
          `recon_workbench_requests_total{method="${method}",route="${route}",status="${status}"} ${n}`,
        );
      }
      lines.push(
        '# HELP recon_workbench_uptime_seconds Seconds since the server started.',
        '# TYPE recon_workbench_uptime_seconds gauge',
        `recon_workbench_uptime_seconds ${Math.round((Date.now() - ctx.metrics.started) / 1000)}`,
      );
      return reply.type('text/plain; version=0.0.4').send(`${lines.join('\n')}\n`);
    },
  );
}
