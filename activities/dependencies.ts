import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Database } from '../db/database.ts';
import type { Config } from '../config/config.ts';
import type { LoadSummary } from '../domain/load-summary.ts';
import type { ReconcileOutcome } from '../domain/run-summary.ts';
import type { ReconMetrics } from '../observability/metrics.ts';
import type { PullSourceRequest } from '../ingest/pull-source.ts';

/** One source, one window of Eastern days: ingest/pull-source.ts's request. */
export type PullRequest = PullSourceRequest;

/** ingest/pull-source.ts `pullSource`: one source, one window, HTTP stream → parser → loader. */
export type PullSourceFn<Client> = (
  deps: { handle: DatabaseHandle; client: Client; config: Config },
  req: PullRequest,
) => Promise<LoadSummary>;

/**
 * reconcile/reconcile-range.ts `reconcileRange`: idempotent matching of Eastern days from..to (of one
 * account's rows when it takes `account`).
 */
export type ReconcileRangeFn = (
  db: Kysely<Database>,
  req: {
    from: string;
    to: string;
    account?: string;
    now?: string;
    settings?: { stuckPendingBusinessDays?: number };
    followUpDays?: number;
  },
) => Promise<Partial<ReconcileOutcome>>;

/** provider/client's `transactionStatus` of one account's client (the status endpoint, its own credentials). */
export type LookupStatusFn<Client> = (
  client: Client,
  transactionId: string,
  signal?: AbortSignal,
) => Promise<Record<string, unknown>>;

/** The provider accounts a worker serves: their names, and each one's client and config. */
export interface AccountProviders<Client> {
  readonly names: readonly string[];
  get(account: string): { readonly client: Client; readonly config: Config } | undefined;
}

/** Everything the activities touch, handed in by the worker (or a test): no module-level state. */
export interface ActivityDependencies<Client> {
  readonly handle: DatabaseHandle;
  /** The client of the account `default` (and of every pull that names no account). */
  readonly provider: Client;
  readonly config: Config;
  /** Every account's client; absent: the one account `default`, served by `provider` and `config`. */
  readonly accounts?: AccountProviders<Client>;
  readonly pullSource: PullSourceFn<Client>;
  readonly reconcileRange: ReconcileRangeFn;
  /**
   * The status lookup of the nightly follow-up, on the account's client; absent: the client's own
   * `transactionStatus` (provider/client), which every real client has.
   */
  readonly lookupStatus?: LookupStatusFn<Client>;
  /** Seconds between heartbeats while an activity has no progress to report (default 5, at most a third of its heartbeat timeout). */
  readonly heartbeatEverySeconds?: number;
  /** Where the process counts its loads (`recon worker` with RECON_METRICS_PORT); absent, nothing is counted. */
  readonly metrics?: ReconMetrics;
}
