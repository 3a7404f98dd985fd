import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHistory, type History } from './history.ts';
import type { Delivery } from './notifications.ts';
import { dispatch } from './server/dispatch.ts';
import type { SandboxFaults } from './server/faults.ts';
import { notificationTargets, notifyWindow } from './server/send-notifications.ts';
import type { SandboxState, SandboxStats } from './server/state.ts';

/**
 * The sandbox provider on 127.0.0.1: token, report (JSON, CSV, zipped), transaction status,
 * ConfirmTrans, interactive transactions and the legacy query, with faults on demand. One module per
 * endpoint (routes/); the running server's state is one object handed to each (server/state.ts).
 */

export type { SandboxFaults } from './server/faults.ts';
export type { SandboxStats } from './server/state.ts';
export { notificationTargets } from './server/send-notifications.ts';

export interface SandboxOptions {
  /** Default 0: any free port. The server listens on 127.0.0.1 only. */
  port?: number;
  seed?: number | string;
  transactions?: number;
  from?: string;
  to?: string;
  /** A history built elsewhere (the other history options are then ignored). */
  history?: History;
  legacyConflictRate?: number;
  /** Statuses as known at this instant (default: the history's, when all has settled). */
  asOf?: string;
  clientId?: string;
  /** Random per start when not given. */
  clientSecret?: string;
  legacyMerchantPass?: string;
  /** expires_in of issued tokens, seconds (default 1800; sent as a string, as in the spec's sample). */
  tokenExpiresIn?: number;
  /**
   * The merchant's transaction notification URL. A bare origin (the receiver's `url`) means its
   * `/notifications/transaction` and `/notifications/return` endpoints.
   */
  notifyUrl?: string;
  /** The return notification URL; default: notifyUrl with a final /transaction changed to /return. */
  returnNotifyUrl?: string;
  notifySecret?: string;
  notifyAttempts?: number;
  notifyBackoffMs?: number;
  faults?: SandboxFaults;
  /** One line per request (method, path, status), without bodies or headers. */
  log?: (line: string) => void;
}

export interface Sandbox {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly queryUrl: string;
  readonly transactionBaseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly legacyMerchantId: string;
  readonly legacyMerchantPass: string;
  readonly history: History;
  readonly stats: SandboxStats;
  /** Notifications sent so far (one entry per notification, after its last attempt). */
  readonly deliveries: readonly Delivery[];
  /** ConfirmTrans bodies received. */
  readonly confirmations: readonly unknown[];
  /** Every access token issued so far (tests check that none leaks into output or the database). */
  issuedTokens(): string[];
  /** RECON_* variables that point `recon pull` (and the client) at this sandbox. */
  env(): Record<string, string>;
  setFaults(faults: SandboxFaults): void;
  setAsOf(asOf: string | undefined): void;
  /** Sends the notifications of the transactions received (and returns made) in the window. */
  notify(query?: { start?: string; end?: string }): Promise<{ sent: number; delivered: number }>;
  /** Waits for notifications in flight. */
  drainNotifications(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the sandbox provider. Responses are streamed from the history's generators, so report size
 * does not change memory use.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const history =
    options.history ??
    createHistory({
      seed: options.seed ?? 1,
      transactions: options.transactions ?? 1000,
      from: options.from ?? '2026-10-20',
      to: options.to ?? '2026-11-10',
      legacyConflictRate: options.legacyConflictRate ?? 0,
    });
  const state: SandboxState = {
    history,
    merchantId: history.options.merchantId,
    clientId: options.clientId ?? 'sandbox-client',
    clientSecret: options.clientSecret ?? randomBytes(18).toString('base64url'),
    legacyMerchantId: history.options.legacyMerchantId,
    legacyMerchantPass: options.legacyMerchantPass ?? randomBytes(10).toString('hex').slice(0, 16),
    tokenExpiresIn: options.tokenExpiresIn ?? 1800,
    faults: { ...options.faults },
    asOf: options.asOf,
    baseUrl: '',
    tokens: new Map(),
    stats: { tokensIssued: 0, requests: {}, faultsInjected: {} },
    deliveries: [],
    confirmations: [],
    inFlight: new Set(),
    notifications: {
      targets: notificationTargets(options.notifyUrl, options.returnNotifyUrl),
      attempts: options.notifyAttempts ?? 5,
      backoffMs: options.notifyBackoffMs ?? 200,
      secret: options.notifySecret,
    },
  };
  const log = options.log ?? (() => {});
  const server = createServer((req, res) => dispatch(state, log, req, res));
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const baseUrl = `${origin}/api`;
  state.baseUrl = baseUrl;
  const { clientId, clientSecret, legacyMerchantId, legacyMerchantPass } = state;

  return {
    baseUrl,
    authUrl: `${origin}/auth`,
    queryUrl: `${origin}/legacy/query`,
    transactionBaseUrl: `${origin}/txn`,
    clientId,
    clientSecret,
    legacyMerchantId,
    legacyMerchantPass,
    history,
    stats: state.stats,
    deliveries: state.deliveries,
    confirmations: state.confirmations,
    issuedTokens() {
      return [...state.tokens.keys()];
    },
    env() {
      return {
        RECON_BASE_URL: baseUrl,
        RECON_AUTH_URL: `${origin}/auth`,
        RECON_QUERY_URL: `${origin}/legacy/query`,
        RECON_CLIENT_ID: clientId,
        RECON_CLIENT_SECRET: clientSecret,
        RECON_LEGACY_MERCHANT_ID: legacyMerchantId,
        RECON_LEGACY_MERCHANT_PASS: legacyMerchantPass,
      };
    },
    setFaults(next) {
      state.faults = { ...next };
    },
    setAsOf(next) {
      state.asOf = next;
    },
    notify(query = {}) {
      return notifyWindow(state, query);
    },
    async drainNotifications() {
      await Promise.all([...state.inFlight]);
    },
    async close() {
      await Promise.all([...state.inFlight]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
