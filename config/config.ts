import { isIP } from 'node:net';
import { ConfigError } from '../domain/errors.ts';
import { loadVolumeSettings, type VolumeSettings } from './volume.ts';
import { type FollowUpSettings, loadFollowUpSettings } from './follow-up.ts';

export type Environment = 'staging' | 'production';

/** The whole configuration, built once from the environment and frozen. Secrets are never logged. */
export interface Config {
  /** Unset means: start the embedded PostgreSQL in {@link Config.dataDir}. */
  readonly databaseUrl: string | undefined;
  /** Unset means: start an ephemeral Temporal dev server for the length of the command. */
  readonly temporalAddress: string | undefined;
  readonly temporalNamespace: string;
  readonly temporalTaskQueue: string;
  readonly environment: Environment;
  readonly provider: {
    readonly baseUrl: string | undefined;
    readonly authUrl: string | undefined;
    readonly queryUrl: string | undefined;
    readonly clientId: string | undefined;
    readonly clientSecret: string | undefined;
    readonly legacyMerchantId: string | undefined;
    readonly legacyMerchantPass: string | undefined;
  };
  readonly notificationSecret: string | undefined;
  readonly port: number | undefined;
  /** Where the embedded PostgreSQL keeps its data between runs. */
  readonly dataDir: string;
  /**
   * RECON_DB_TIMEOUT_SECONDS: how long a command a person waits for keeps waiting for a database that
   * stopped answering before it gives up (db/watchdog.ts). Unset: the default of db/watchdog.ts (60).
   */
  readonly dbTimeoutSeconds: number | undefined;
  /**
   * RECON_RAW_RETENTION_DAYS: after each nightly run, clear consumers' personal data from raw lines,
   * payloads and history older than this many days (`recon retention`). Unset: the nightly run keeps it.
   */
  readonly rawRetentionDays: number | undefined;
  /**
   * RECON_MAX_REJECTED_PER_WINDOW: the most lines one source's answer for one window may reject in a
   * workflow's pull (nightly, backfill) before the load is rolled back and the window fails, as
   * `--max-rejected` does for a command. Default {@link DEFAULT_MAX_REJECTED_PER_WINDOW}.
   */
  readonly maxRejectedPerWindow: number;
  /**
   * RECON_ALERT_WEBHOOKS (secret): comma-separated webhook entries, each `slack:URL`, `json:URL` or a
   * bare URL (JSON), that receive run summaries and window failures (reconcile/alerts). Read only by
   * the alert activity; never logged, never in a workflow history or the database. Optional: a
   * config built in code (tests, tools) without it sends no alerts.
   */
  readonly alertWebhooks?: string | undefined;
  /** RECON_WORKBENCH_URL: public base URL of `recon serve`, for the links in alerts. */
  readonly workbenchUrl?: string | undefined;
  /**
   * RECON_WORKBENCH_READ_URL (secret: it may hold a password): a streaming replica of the warehouse
   * that `recon serve` reads its worklist, CSV, runs, loads and coverage from
   * (workbench/replica-reads.ts). Unset: everything reads the primary.
   */
  readonly workbenchReadUrl?: string | undefined;
  /** RECON_VOLUME_*: the low-volume check (config/volume.ts). Absent: its defaults. */
  readonly volume?: VolumeSettings;
  /**
   * RECON_WORKBENCH_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges (IPv4 or IPv6) of the
   * proxies in front of `recon serve`. Only connections from them may name the client address
   * (X-Forwarded-For, which sign-in throttling counts by), the protocol (X-Forwarded-Proto) and,
   * with `--trusted-user-header`, the signed-in user (docs/security.md). Unset: none.
   */
  readonly workbenchTrustedProxies?: readonly string[] | undefined;
  /**
   * RECON_NOTIFICATION_ALLOW: comma-separated addresses or CIDR ranges that may call the notification
   * receiver (others are answered 403). Unset: any address.
   */
  readonly notificationAllow?: readonly string[] | undefined;
  /**
   * RECON_ANALYST_PASSWORD (secret): the password of the login `recon analysts add` creates, so that it
   * is never on a command line. Unset: the login has no password.
   */
  readonly analystPassword?: string | undefined;
  /** RECON_FOLLOW_UP_DAYS, RECON_FOLLOW_UP_PER_NIGHT, RECON_STUCK_PENDING_DAYS (config/follow-up.ts). */
  readonly followUp: FollowUpSettings;
}

/** A comma-separated list of IP addresses or CIDR ranges; throws naming the first entry that is not. */
function parseAddressList(
  name: string,
  value: string | undefined,
  whose: string,
): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      rest.length > 0 ||
      (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max))
    )
      throw new ConfigError(
        `${name} holds ${JSON.stringify(entry)}, which is not an IP address or CIDR range: list ${whose}, e.g. 10.0.0.5,10.1.0.0/16`,
      );
  }
  return Object.freeze(entries);
}

/**
 * Rejected lines one source may have in one window of a workflow before the window fails. A provider
 * file of the described layout rejects none: a few odd rows are kept in rejected_rows and the window
 * goes on (they are counted in its summary), while a layout change or an answer that is mostly not
 * data stops the window instead of loading a fraction of a day.
 */
export const DEFAULT_MAX_REJECTED_PER_WINDOW = 100;

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function parsePort(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 0 || port > 65535) {
    throw new ConfigError(
      `${name}=${JSON.stringify(value)} is not a TCP port: set it to a number from 0 to 65535`,
    );
  }
  return port;
}

function parseDays(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 36_500) {
    throw new ConfigError(
      `${name}=${JSON.stringify(value)} is not a number of days: set it to a whole number from 0 to 36500, or unset it`,
    );
  }
  return Number(value);
}

function parseCount(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > 1_000_000_000) {
    throw new ConfigError(
      `${name}=${JSON.stringify(value)} is not a number of lines: set it to a whole number from 0 to 1000000000, or unset it (default ${fallback})`,
    );
  }
  return Number(value);
}

function parseSeconds(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 86_400) {
    throw new ConfigError(
      `${name}=${JSON.stringify(value)} is not a number of seconds: set it to a whole number from 1 to 86400, or unset it`,
    );
  }
  return Number(value);
}

/** The workbench's public address as links use it: http(s), no credentials, no trailing slash; else null. */
export function workbenchUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash)
    return null;
  return url.href.replace(/\/+$/, '');
}

function parseBaseUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const url = workbenchUrl(value);
  if (url === null) {
    // The value is not echoed: an address with a password in it is a secret.
    throw new ConfigError(
      `${name} is not an http(s) address without user or password: set it to the workbench's public address, e.g. https://recon.example.com`,
    );
  }
  return url;
}

function parsePostgresUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    // The value is not echoed: a connection string holds a password.
    throw new ConfigError(
      `${name} is not a PostgreSQL connection string: set it to postgres://USER:PASSWORD@HOST:PORT/DATABASE, or unset it`,
    );
  }
  return value;
}

/** Reads `.env` from the working directory when present; variables already set win. */
export function loadDotEnv(path = '.env'): void {
  try {
    process.loadEnvFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Builds the frozen config from `env`. Throws {@link ConfigError} naming each malformed variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const environment = nonEmpty(env.RECON_ENVIRONMENT) ?? 'staging';
  if (environment !== 'staging' && environment !== 'production') {
    throw new ConfigError(
      `RECON_ENVIRONMENT=${JSON.stringify(environment)} is not valid: use staging or production`,
    );
  }
  return Object.freeze({
    databaseUrl: nonEmpty(env.DATABASE_URL),
    temporalAddress: nonEmpty(env.TEMPORAL_ADDRESS),
    temporalNamespace: nonEmpty(env.TEMPORAL_NAMESPACE) ?? 'default',
    temporalTaskQueue: nonEmpty(env.TEMPORAL_TASK_QUEUE) ?? 'ibt-recon',
    environment,
    provider: Object.freeze({
      baseUrl: nonEmpty(env.RECON_BASE_URL),
      authUrl: nonEmpty(env.RECON_AUTH_URL),
      queryUrl: nonEmpty(env.RECON_QUERY_URL),
      clientId: nonEmpty(env.RECON_CLIENT_ID),
      clientSecret: nonEmpty(env.RECON_CLIENT_SECRET),
      legacyMerchantId: nonEmpty(env.RECON_LEGACY_MERCHANT_ID),
      legacyMerchantPass: nonEmpty(env.RECON_LEGACY_MERCHANT_PASS),
    }),
    notificationSecret: nonEmpty(env.RECON_NOTIFICATION_SECRET),
    port: parsePort('PORT', nonEmpty(env.PORT)),
    dataDir: nonEmpty(env.RECON_DATA_DIR) ?? '.data',
    dbTimeoutSeconds: parseSeconds('RECON_DB_TIMEOUT_SECONDS', nonEmpty(env.RECON_DB_TIMEOUT_SECONDS)),
    rawRetentionDays: parseDays('RECON_RAW_RETENTION_DAYS', nonEmpty(env.RECON_RAW_RETENTION_DAYS)),
    maxRejectedPerWindow: parseCount(
      'RECON_MAX_REJECTED_PER_WINDOW',
      nonEmpty(env.RECON_MAX_REJECTED_PER_WINDOW),
      DEFAULT_MAX_REJECTED_PER_WINDOW,
    ),
    alertWebhooks: nonEmpty(env.RECON_ALERT_WEBHOOKS),
    workbenchUrl: parseBaseUrl('RECON_WORKBENCH_URL', nonEmpty(env.RECON_WORKBENCH_URL)),
    workbenchReadUrl: parsePostgresUrl('RECON_WORKBENCH_READ_URL', nonEmpty(env.RECON_WORKBENCH_READ_URL)),
    volume: loadVolumeSettings(env),
    workbenchTrustedProxies: parseAddressList(
      'RECON_WORKBENCH_TRUSTED_PROXIES',
      nonEmpty(env.RECON_WORKBENCH_TRUSTED_PROXIES),
      "the proxies' addresses",
    ),
    notificationAllow: parseAddressList(
      'RECON_NOTIFICATION_ALLOW',
      nonEmpty(env.RECON_NOTIFICATION_ALLOW),
      'the addresses that may call the notification receiver',
    ),
    analystPassword: nonEmpty(env.RECON_ANALYST_PASSWORD),
    followUp: loadFollowUpSettings(env),
  });
}

/** Returns the named settings or throws one ConfigError that lists every missing variable. */
export function requireSettings<const K extends string>(
  values: Record<K, string | undefined>,
  purpose: string,
): Record<K, string> {
  const missing = Object.entries(values)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length > 0) {
    throw new ConfigError(
      `${purpose} needs ${missing.join(', ')}: set ${missing.length > 1 ? 'them' : 'it'} in the environment or in .env`,
    );
  }
  return values as Record<K, string>;
}
