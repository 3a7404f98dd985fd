import { ConfigError } from '../domain/errors.ts';
import { metricsSettings } from './metrics.ts';

/**
 * Worker tuning from the environment (docs/operations.md, "Workers"):
 *
 * | variable | worker option | default |
 * |---|---|---|
 * | `RECON_WORKER_ACTIVITY_SLOTS` | maxConcurrentActivityTaskExecutions | 8 |
 * | `RECON_WORKER_WORKFLOW_SLOTS` | maxConcurrentWorkflowTaskExecutions | 40 |
 * | `RECON_PROVIDER_ACTIVITIES_PER_SECOND` | maxTaskQueueActivitiesPerSecond (whole task queue, all workers) | 5 |
 * | `RECON_WORKER_SHUTDOWN_GRACE_SECONDS` | shutdownGraceTime | 30 |
 * | `RECON_METRICS_PORT`, `RECON_METRICS_HOST` | Prometheus `GET /metrics` (off when the port is unset) | off, 127.0.0.1 |
 */
export interface WorkerSettings {
  readonly maxConcurrentActivityTaskExecutions: number;
  readonly maxConcurrentWorkflowTaskExecutions: number;
  /** The provider's quota: activities started per second across the task queue. */
  readonly maxTaskQueueActivitiesPerSecond: number;
  readonly shutdownGraceSeconds: number;
  /** Where `GET /metrics` listens; undefined: no metrics server. */
  readonly metrics?: { readonly host: string; readonly port: number };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new ConfigError(
      `${name}=${JSON.stringify(raw)} is not valid: set it to a positive ${integer ? 'whole ' : ''}number`,
    );
  }
  return n;
}

/** Reads {@link WorkerSettings}; throws a ConfigError naming a malformed variable. */
export function loadWorkerSettings(env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const metrics = metricsSettings(env);
  return Object.freeze({
    maxConcurrentActivityTaskExecutions: positive(env, 'RECON_WORKER_ACTIVITY_SLOTS', 8, true),
    maxConcurrentWorkflowTaskExecutions: positive(env, 'RECON_WORKER_WORKFLOW_SLOTS', 40, true),
    maxTaskQueueActivitiesPerSecond: positive(env, 'RECON_PROVIDER_ACTIVITIES_PER_SECOND', 5, false),
    shutdownGraceSeconds: positive(env, 'RECON_WORKER_SHUTDOWN_GRACE_SECONDS', 30, false),
    ...(metrics ? { metrics } : {}),
  });
}
