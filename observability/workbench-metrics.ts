/**
 * The workbench's Prometheus metrics (`recon serve`), through prom-client like the worker's and the
 * receiver's: the process defaults, the warehouse gauges (the open discrepancies are the worklist
 * finance works in the workbench), and the workbench's own requests and actions. Labels are closed
 * sets: `route` is the route pattern (`/api/discrepancies/:id`), never the requested URL, so that no
 * id, filter or query string becomes a label value.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { DatabaseHandle } from '../db/connect.ts';
import { collectWarehouseGauges, createRegistry } from './metrics.ts';

/** What a request that matched no route is counted under (the 404 handler's answers). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface WorkbenchMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly requestDuration: Histogram<'method' | 'route'>;
  readonly discrepancyActions: Counter<'action' | 'via'>;
}

/** A registry of its own for one workbench server, reading the warehouse through `handle.db`. */
export function createWorkbenchMetrics(handle: Pick<DatabaseHandle, 'db'>): WorkbenchMetrics {
  const registry = createRegistry();
  collectWarehouseGauges({ registry }, handle);
  return {
    registry,
    requests: new Counter({
      name: 'recon_workbench_requests_total',
      help: `Requests answered by the workbench, by method, route pattern (${UNMATCHED_ROUTE}: no route) and HTTP status`,
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'recon_workbench_request_duration_seconds',
      help: 'Time from receiving a workbench request to sending its answer, by method and route pattern',
      labelNames: ['method', 'route'],
      // Up to the workbench's statement timeout (30 s).
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    discrepancyActions: new Counter({
      name: 'recon_workbench_discrepancy_actions_total',
      help: 'Discrepancies acted on in the workbench, by action and whether one at a time (single) or by a bulk action (bulk)',
      labelNames: ['action', 'via'],
      registers: [registry],
    }),
  };
}

/** Counts one answered request; `route` is Fastify's route pattern, or undefined when none matched. */
export function recordWorkbenchRequest(
  metrics: WorkbenchMetrics,
  request: { method: string; route: string | undefined; status: number; seconds: number },
): void {
  const route = request.route ?? UNMATCHED_ROUTE;
  metrics.requests.inc({ method: request.method, route, status: String(request.status) });
  metrics.requestDuration.observe({ method: request.method, route }, request.seconds);
}
