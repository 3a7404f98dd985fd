/**
 * The Prometheus metrics of the pipeline's long-running processes, through prom-client (never a
 * hand-written exposition). One registry per process, so that a test can read what its own process
 * counted. Label values are closed sets (source, endpoint, status class, kind, currency): never an
 * amount, an id or anything a consumer sent.
 *
 * What is counted where:
 * - loads: at the activity boundary (`recordLoad`), for every pull a worker runs;
 * - provider requests: from undici's diagnostics channels, so every request of the provider client
 *   is counted by endpoint and HTTP status (429s included), and network errors as `error`;
 * - open discrepancies and the last successful pull per source: read from the warehouse at scrape
 *   time (`collectWarehouseGauges`), so that every worker reports the same truth;
 * - the workbench's requests and actions: `workbench-metrics.ts`, on a registry of its own.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DatabaseHandle } from '../db/connect.ts';

export interface ReconMetrics {
  readonly registry: Registry;
  readonly rowsLoaded: Counter<'source'>;
  readonly rowsRejected: Counter<'source'>;
  readonly loadDuration: Histogram<'source' | 'status'>;
  readonly providerRequests: Counter<'endpoint' | 'status'>;
  readonly notifications: Counter<'kind' | 'outcome'>;
  readonly receiverResponses: Counter<'status'>;
}

/**
 * A registry of one process with prom-client's defaults (`recon_process_*`: CPU, memory, event-loop
 * lag, handles, `recon_process_start_time_seconds`).
 */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'recon_' });
  return registry;
}

export function createMetrics(): ReconMetrics {
  const registry = createRegistry();
  return {
    registry,
    rowsLoaded: new Counter({
      name: 'recon_rows_loaded_total',
      help: 'Rows loaded into the warehouse by pulls, per source',
      labelNames: ['source'],
      registers: [registry],
    }),
    rowsRejected: new Counter({
      name: 'recon_rows_rejected_total',
      help: 'Rows a pull could not parse (kept in rejected_rows), per source',
      labelNames: ['source'],
      registers: [registry],
    }),
    loadDuration: new Histogram({
      name: 'recon_load_duration_seconds',
      help: 'Duration of one pull of one source and window, from the first request to the commit',
      labelNames: ['source', 'status'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers: [registry],
    }),
    providerRequests: new Counter({
      name: 'recon_provider_requests_total',
      help: 'HTTP requests to the provider by endpoint and status code (error: no response)',
      labelNames: ['endpoint', 'status'],
      registers: [registry],
    }),
    notifications: new Counter({
      name: 'recon_notifications_total',
      help: 'Notification deliveries by kind and outcome (stored, duplicate, quarantined)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    receiverResponses: new Counter({
      name: 'recon_receiver_responses_total',
      help: 'Answers of the notification receiver by HTTP status (503: the database was away)',
      labelNames: ['status'],
      registers: [registry],
    }),
  };
}

/** Counts one finished pull: rows loaded and rejected, and its duration. */
export function recordLoad(
  metrics: ReconMetrics,
  load: { source: string; status: string; rowsLoaded: number; rowsRejected: number; durationMs: number },
): void {
  metrics.rowsLoaded.inc({ source: load.source }, load.rowsLoaded);
  metrics.rowsRejected.inc({ source: load.source }, load.rowsRejected);
  metrics.loadDuration.observe({ source: load.source, status: load.status }, load.durationMs / 1000);
}

interface UndiciRequest {
  readonly origin?: string | URL;
  readonly path?: string;
}

interface ProviderUrls {
  readonly baseUrl?: string | undefined;
  readonly authUrl?: string | undefined;
  readonly queryUrl?: string | undefined;
}

/**
 * Counts the provider client's requests (undici's diagnostics channels; they see every request of
 * the process's undici, so anything that is not one of the configured provider URLs is `other`).
 * Returns a function that stops counting.
 */
export function countProviderRequests(
  metrics: ReconMetrics,
  /** The provider's addresses: of the account `default`, or of every account (several accounts). */
  provider: ProviderUrls | readonly ProviderUrls[],
): () => void {
  const all: readonly ProviderUrls[] = Array.isArray(provider) ? provider : [provider as ProviderUrls];
  const endpointIn = (urls: ProviderUrls, url: string): string | null => {
    if (urls.authUrl && url.startsWith(urls.authUrl.replace(/\/$/, ''))) return 'token';
    if (urls.queryUrl && url.startsWith(urls.queryUrl.replace(/\/$/, ''))) return 'legacy-query';
    if (urls.baseUrl && url.startsWith(urls.baseUrl.replace(/\/$/, ''))) {
      if (url.includes('/transaction-status')) return 'transaction-status';
      if (url.includes('/report')) return 'report';
      return 'report-api';
    }
    return null;
  };
  const endpointOf = (request: UndiciRequest): string => {
    const url = `${String(request.origin ?? '').replace(/\/$/, '')}${request.path ?? ''}`;
    for (const urls of all) {
      const endpoint = endpointIn(urls, url);
      if (endpoint) return endpoint;
    }
    return 'other';
  };
  const onHeaders = (message: unknown) => {
    const { request, response } = message as { request: UndiciRequest; response: { statusCode: number } };
    metrics.providerRequests.inc({ endpoint: endpointOf(request), status: String(response.statusCode) });
  };
  const onError = (message: unknown) => {
    const { request } = message as { request: UndiciRequest };
    metrics.providerRequests.inc({ endpoint: endpointOf(request), status: 'error' });
  };
  subscribe('undici:request:headers', onHeaders);
  subscribe('undici:request:error', onError);
  return () => {
    unsubscribe('undici:request:headers', onHeaders);
    unsubscribe('undici:request:error', onError);
  };
}

/**
 * Gauges read from the warehouse when /metrics is scraped: open discrepancies by kind and currency
 * (counts only: money never goes into a label), and the time of the last committed pull per source.
 * A scrape while the database is away reports `recon_warehouse_up 0` instead of failing.
 */
export function collectWarehouseGauges(
  metrics: Pick<ReconMetrics, 'registry'>,
  handle: Pick<DatabaseHandle, 'db'>,
): void {
  new Gauge({
    name: 'recon_warehouse_up',
    help: 'Whether this scrape could read the warehouse (1) or not (0)',
    registers: [metrics.registry],
    async collect() {
      this.set(
        await sql`select 1`.execute(handle.db).then(
          () => 1,
          () => 0,
        ),
      );
    },
  });
  new Gauge({
    name: 'recon_open_discrepancies',
    help: 'Discrepancies not resolved, by kind, currency and status (open, acknowledged)',
    labelNames: ['kind', 'currency', 'status'],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      try {
        const { rows } = await sql<{ kind: string; currency: string | null; status: string; n: number }>`
          select kind, currency, status, count(*)::int as n from discrepancies
          where status <> 'resolved' group by kind, currency, status`.execute(handle.db);
        for (const r of rows)
          this.set({ kind: r.kind, currency: r.currency ?? 'none', status: r.status }, r.n);
      } catch {
        // recon_warehouse_up says why nothing is reported.
      }
    },
  });
  new Gauge({
    name: 'recon_last_successful_pull_timestamp_seconds',
    help: 'When the last committed pull of each source by a workflow (nightly or backfill) finished',
    labelNames: ['source'],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      try {
        const { rows } = await sql<{ source: string; at: number }>`
          select source, extract(epoch from max(finished_at))::float8 as at from loads
          where status = 'committed' and origin = 'workflow' group by source`.execute(handle.db);
        for (const r of rows) this.set({ source: r.source }, r.at);
      } catch {
        // recon_warehouse_up says why nothing is reported.
      }
    },
  });
}
