import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Database } from '../db/database.ts';
import type { Config } from '../config/config.ts';
import type { LoadSummary } from '../domain/load-summary.ts';
import type { ReconMetrics } from '../observability/metrics.ts';
import type { PullSourceRequest } from '../ingest/pull-source.ts';

/** One source, one window of Eastern days: ingest/pull-source.ts's request. */
export type PullRequest = PullSourceRequest;

/** ingest/pull-source.ts `pullSource`: one source, one window, HTTP stream → parser → loader. */
export type PullSourceFn<Client> = (
  deps: { handle: DatabaseHandle; client: Client; config: Config },
  req: PullRequest,
) => Promise<LoadSummary>;

/** reconcile/reconcile-range.ts `reconcileRange`: idempotent matching of Eastern days from..to. */
export type ReconcileRangeFn = (db: Kysely<Database>, req: { from: string; to: string }) => Promise<unknown>;

/** Everything the activities touch, handed in by the worker (or a test): no module-level state. */
export interface ActivityDependencies<Client> {
  readonly handle: DatabaseHandle;
  readonly provider: Client;
  readonly config: Config;
  readonly pullSource: PullSourceFn<Client>;
  readonly reconcileRange: ReconcileRangeFn;
  /** Seconds between heartbeats while an activity has no progress to report (default 5, at most a third of its heartbeat timeout). */
  readonly heartbeatEverySeconds?: number;
  /** Where the process counts its loads (`recon worker` with RECON_METRICS_PORT); absent, nothing is counted. */
  readonly metrics?: ReconMetrics;
}
