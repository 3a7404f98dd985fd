import { ConfigError } from '../domain/errors.ts';

/**
 * Where a long-running process serves `GET /metrics`: `RECON_METRICS_PORT` (unset: no metrics
 * server; 0: any free port) on `RECON_METRICS_HOST` (default 127.0.0.1; 0.0.0.0 in a container).
 */
export function metricsSettings(
  env: NodeJS.ProcessEnv = process.env,
): { host: string; port: number } | undefined {
  const raw = env.RECON_METRICS_PORT?.trim();
  if (!raw) return undefined;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    throw new ConfigError(
      `RECON_METRICS_PORT=${JSON.stringify(raw)} is not valid: set it to a TCP port (1-65535; 0 picks a free one)`,
    );
  }
  return { host: env.RECON_METRICS_HOST?.trim() || '127.0.0.1', port };
}
