/**
 * `GET /metrics` of a long-running process: this process's registry, followed by the Temporal SDK's
 * own runtime metrics (worker slots, poll latencies, workflow and activity latencies: the SDK serves
 * them on a loopback port of its own, `runtimeMetricsUrl`, and they are appended as served). Both are
 * Prometheus text; their names do not overlap (`recon_*`, `temporal_*`).
 */
import { get, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReconMetrics } from './metrics.ts';

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  metrics: Pick<ReconMetrics, 'registry'>;
  host: string;
  port: number;
  runtimeMetricsUrl?: string;
}): Promise<MetricsServer> {
  const { registry } = options.metrics;
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    void (async () => {
      try {
        const own = await registry.metrics();
        const runtime = options.runtimeMetricsUrl ? await fetchText(options.runtimeMetricsUrl) : '';
        res.writeHead(200, { 'content-type': registry.contentType }).end(`${own}\n${runtime}`);
      } catch (error) {
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`metrics unavailable: ${(error as Error).message}\n`);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** node:http, not undici: the provider-request counter listens to undici's channels. */
function fetchText(url: string): Promise<string> {
  return new Promise((resolve) => {
    const req = get(url, { timeout: 2000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
      res.on('error', () => resolve(''));
    });
    // The runtime's exporter missing is not a reason to lose this process's own metrics.
    req.on('error', () => resolve(''));
    req.on('timeout', () => req.destroy());
  });
}
