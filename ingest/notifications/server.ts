import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Accounts } from '../../config/accounts.ts';
import type { Config } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import type { ReconMetrics } from '../../observability/metrics.ts';
import { describeJsonError, redactPersonal } from '../../domain/privacy.ts';
import {
  type NormalisedNotification,
  type NotificationKind,
  normaliseNotification,
} from './normalise-notification.ts';
import { authorisedBy, fileUnder, quarantineAccount, routeOf } from './notification-account.ts';
import { isDatabaseUnavailable } from '../../db/connection-errors.ts';
import { DatabaseWatch } from './database-watch.ts';
import { jsonContentType, readBody, strictUtf8 } from './request-body.ts';
import {
  createNotificationWriter,
  type GroupCommitOptions,
  type NotificationWriter,
} from './group-commit.ts';
import { quarantineNotification, type StoredNotification } from './store-notification.ts';

/**
 * Pluggable confirmation through ConfirmTrans (docs/provider-interface.md): the confirmation of the
 * account the notification is filed under (`notification.account`), by that account's client. Called
 * after the notification is committed and answered; its failure is logged (without the body) and
 * never fails the delivery.
 */
export type ConfirmNotification = (
  body: unknown,
  notification: NormalisedNotification,
) => Promise<{ verificationCode: string | null }>;

export interface NotificationReceiverOptions {
  readonly handle: Pick<DatabaseHandle, 'db'>;
  readonly config: Pick<Config, 'notificationSecret'>;
  /**
   * The accounts notifications are filed under (notification-account.ts); undefined: every
   * notification is the account `default`'s.
   */
  readonly accounts?: Accounts;
  readonly port: number;
  readonly host?: string;
  /** Caller CIDRs allowed (RECON_NOTIFICATION_ALLOW, comma-separated); empty or absent: any caller. */
  readonly allow?: readonly string[];
  /** Largest body accepted, bytes (default 64 KiB); larger bodies are answered 413. */
  readonly maxBodyBytes?: number;
  readonly confirm?: ConfirmNotification;
  /** Group commit tuning (ingest/notifications/group-commit.ts). */
  readonly groupCommit?: GroupCommitOptions;
  /** How long a delivery waits for its commit before it is answered 503, ms (default 10,000). */
  readonly storeTimeoutMs?: number;
  /** How often a database found away is probed, ms (default 500). */
  readonly probeIntervalMs?: number;
  /** One line per request: method, path, status, reason. Never headers or bodies. */
  readonly log?: (line: string) => void;
  /** Where answers and deliveries are counted (`recon notifications serve` with RECON_METRICS_PORT). */
  readonly metrics?: ReconMetrics;
}

export interface NotificationReceiver {
  readonly url: string;
  close(): Promise<void>;
}

/** Parses `10.0.0.0/8, 127.0.0.1, ::1/128` into a BlockList. Throws ConfigError naming a bad entry. */
export function parseAllowList(entries: readonly string[]): BlockList | null {
  const list = new BlockList();
  let any = false;
  for (const raw of entries.map((e) => e.trim()).filter(Boolean)) {
    const [address = '', bits] = raw.split('/');
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new ConfigError(
        `RECON_NOTIFICATION_ALLOW entry ${JSON.stringify(raw)} is not an IP address or CIDR`,
      );
    }
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
    any = true;
  }
  return any ? list : null;
}

function allowed(list: BlockList | null, remote: string | undefined): boolean {
  if (!list) return true;
  if (!remote) return false;
  const v4 = remote.startsWith('::ffff:') ? remote.slice(7) : remote;
  return isIP(v4) === 4 ? list.check(v4, 'ipv4') : list.check(remote, 'ipv6');
}

/** Constant-time check of the secret sent as a bearer token or as the basic-auth password. */
export function authorised(header: string | undefined, secret: string): boolean {
  return authorisedBy(header, secret, undefined) !== undefined;
}

function reply(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

class StoreTimeout extends Error {}

/** `promise`, or a StoreTimeout after `ms` (the promise's own outcome is then ignored). */
function withinTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(`the database did not commit within ${ms} ms`)), ms);
  });
  promise.catch(() => {}).finally(() => clearTimeout(timer));
  return Promise.race([promise, timeout]);
}

/** Seconds a sender is asked to wait (Retry-After) while the database is away. */
const RETRY_AFTER_SECONDS = 2;

/**
 * Starts the notification receiver: `POST /notifications/transaction`, `POST /notifications/return`,
 * `GET /health` (= `/health/live`: the process answers) and `GET /health/ready` (the database answers).
 *
 * Every authenticated delivery is durable before it is answered: a usable body is committed to
 * `notifications` (group commit: deliveries arriving together share one commit) and answered 200; a
 * body the receiver cannot use is kept, raw bytes and reason, in `notification_quarantine` and
 * answered 4xx (400 unusable content, 413 too large, 415 not JSON); a retry of it is counted on the
 * same row. 503 with Retry-After means only that nothing could be stored because the database is
 * away: the receiver keeps running, answers 503 at once until a probe finds the database again, then
 * accepts with no restart. Unauthenticated callers get 401 and nothing is stored. Refuses to start
 * without RECON_NOTIFICATION_SECRET.
 */
export async function startNotificationReceiver(
  options: NotificationReceiverOptions,
): Promise<NotificationReceiver> {
  const secret = options.config.notificationSecret;
  const accounts = options.accounts;
  if (!secret && !accounts?.list.some((a) => a.notificationSecret !== undefined)) {
    throw new ConfigError(
      'the notification receiver needs RECON_NOTIFICATION_SECRET: set it to the secret the provider sends as a bearer token or basic-auth password',
    );
  }
  const log = options.log ?? (() => {});
  const { db } = options.handle;
  const r: Receiver = {
    options,
    secret,
    accounts,
    allowList: parseAllowList(options.allow ?? []),
    limit: options.maxBodyBytes ?? 64 * 1024,
    log,
    db,
    writer: createNotificationWriter(db, options.groupCommit),
    storeTimeoutMs: options.storeTimeoutMs ?? 10_000,
    database: new DatabaseWatch(db, log, options.probeIntervalMs ?? 500),
  };
  const server = createServer((req, res) => {
    handle(r, req, res).catch((error: unknown) => {
      log(`${req.method} ${req.url} 500 ${(error as Error).name}`);
      if (!res.headersSent)
        reply(res, 500, { error: 'internal error: the notification was not stored, retry' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: async () => {
      r.database.close();
      // Deliveries being read or committed are finished and answered; then every connection goes.
      const closed = new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
      });
      server.closeIdleConnections();
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (grace = setTimeout(resolve, 5000)))]);
      clearTimeout(grace);
      server.closeAllConnections();
      await closed;
      await r.writer.drain();
    },
  };
}

/** What the handling of every request needs: the options, checked once, and the database's state. */
interface Receiver {
  readonly options: NotificationReceiverOptions;
  readonly secret: string | undefined;
  readonly accounts: Accounts | undefined;
  readonly allowList: BlockList | null;
  /** Largest body kept, bytes. */
  readonly limit: number;
  readonly log: (line: string) => void;
  readonly db: NotificationReceiverOptions['handle']['db'];
  readonly writer: NotificationWriter;
  readonly storeTimeoutMs: number;
  readonly database: DatabaseWatch;
}

/** One request's answer: sent, counted and logged ({@link NotificationReceiverOptions.log}). */
interface Answer {
  (status: number, body: Record<string, unknown>, headers?: Record<string, string>): void;
  /** 503 with Retry-After: the database is away and nothing was stored. */
  unavailable(): void;
}

function answerTo(r: Receiver, req: IncomingMessage, res: ServerResponse, path: string): Answer {
  const done = (status: number, body: Record<string, unknown>, headers?: Record<string, string>) => {
    reply(res, status, body, headers);
    r.options.metrics?.receiverResponses.inc({ status: String(status) });
    r.log(`${req.method} ${path} ${status}${body.error ? ` ${String(body.error)}` : ''}`);
  };
  return Object.assign(done, {
    unavailable: () =>
      done(
        503,
        { error: 'the database is unavailable: nothing was stored, retry' },
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      ),
  });
}

/** A delivery that passed the caller checks: its kind, the account its path or secret names, its body. */
interface Delivery {
  readonly req: IncomingMessage;
  readonly kind: NotificationKind;
  readonly named: string | undefined;
  readonly bytes: Buffer;
  readonly contentType: string | null;
}

/** Health checks, then the caller checks (address, path, method, credentials), then the delivery. */
async function handle(r: Receiver, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const done = answerTo(r, req, res, path);
  if (!allowed(r.allowList, req.socket.remoteAddress))
    return done(403, { error: 'caller address not allowed' });
  if (req.method === 'GET' && (path === '/health' || path === '/health/live'))
    return done(200, { status: 'ok' });
  if (req.method === 'GET' && path === '/health/ready') {
    if (!r.database.away && (await r.database.ping(2000))) return done(200, { status: 'ready' });
    return done(503, { status: 'unavailable', error: 'the database is unavailable' });
  }
  const route = routeOf(path);
  if (!route) return done(404, { error: 'not found' });
  const { kind } = route;
  if (req.method !== 'POST') return done(405, { error: 'use POST' });
  const auth = authorisedBy(req.headers.authorization, r.secret, r.accounts);
  // An account's own secret is good for that account's deliveries only.
  if (
    !auth ||
    (auth.account !== undefined && route.account !== undefined && auth.account !== route.account)
  ) {
    req.resume();
    return done(401, { error: 'missing or wrong credentials' });
  }
  if (r.database.away) {
    req.resume();
    return done.unavailable();
  }
  const { bytes, truncated } = await readBody(req, r.limit);
  const delivery: Delivery = {
    req,
    kind,
    named: route.account ?? auth.account,
    bytes,
    contentType: req.headers['content-type'] ?? null,
  };
  if (truncated)
    return quarantine(
      r,
      done,
      delivery,
      413,
      `body larger than ${r.limit} bytes: only its first ${r.limit} bytes were kept`,
    );
  return receive(r, done, delivery);
}

/** Decodes, parses, checks and files the delivery's body, then stores it; what it cannot use, it quarantines. */
async function receive(r: Receiver, done: Answer, d: Delivery): Promise<void> {
  const { contentType } = d;
  if (!jsonContentType(contentType ?? undefined))
    return quarantine(
      r,
      done,
      d,
      415,
      `content-type ${JSON.stringify(contentType?.slice(0, 80))} is not application/json`,
    );
  let text: string;
  try {
    text = strictUtf8.decode(d.bytes);
  } catch {
    return quarantine(r, done, d, 400, 'body is not valid UTF-8 (the bytes are kept as received)');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return quarantine(r, done, d, 400, `body is not JSON: ${describeJsonError(error)}`);
  }
  const result = normaliseNotification(d.kind, body);
  if (!result.ok) return quarantine(r, done, d, 400, result.reason);
  const filing = fileUnder(r.accounts, d.named, result.value.merchant_id);
  if (!filing.ok) return quarantine(r, done, d, 400, filing.reason, filing.account);
  const notification = { ...result.value, account: filing.account };
  let stored: StoredNotification;
  try {
    stored = await withinTimeout(r.writer.store(notification), r.storeTimeoutMs);
  } catch (error) {
    if (error instanceof StoreTimeout) {
      // The database accepts connections but does not answer (stalled, or locked out): stop
      // waiting. The commit may still happen later; the provider's retry is then counted as a
      // repeat delivery of the same row, never stored twice.
      r.database.lost(error);
      return done.unavailable();
    }
    if (isDatabaseUnavailable(error)) {
      r.database.lost(error);
      return done.unavailable();
    }
    // PostgreSQL refused this body for a reason the validation did not foresee: keep it.
    const { code, message } = error as { code?: string; message?: string };
    return quarantine(
      r,
      done,
      d,
      400,
      `the database refused the notification: ${code ?? ''} ${message ?? ''}`.trim(),
    );
  }
  r.options.metrics?.notifications.inc({ kind: d.kind, outcome: stored.inserted ? 'stored' : 'duplicate' });
  done(200, { status: stored.inserted ? 'stored' : 'duplicate', notificationId: stored.notificationId });
  if (r.options.confirm) confirmLater(r, r.options.confirm, body, notification, stored.notificationId);
}

/** Keeps the body with the reason, then answers `status`; 503 only if even that failed. */
async function quarantine(
  r: Receiver,
  done: Answer,
  d: Delivery,
  status: number,
  why: string,
  account = quarantineAccount(r.accounts, d.named),
): Promise<void> {
  // Analysts read the reason, and the answer may be logged by the caller: no personal value in it.
  const reason = redactPersonal(why);
  try {
    await withinTimeout(
      quarantineNotification(r.db, {
        account,
        kind: d.kind,
        reason,
        body: d.bytes,
        contentType: d.contentType,
        remoteAddress: d.req.socket.remoteAddress ?? null,
      }),
      r.storeTimeoutMs,
    );
  } catch (error) {
    if (error instanceof StoreTimeout || isDatabaseUnavailable(error)) {
      r.database.lost(error);
      return done.unavailable();
    }
    throw error;
  }
  r.options.metrics?.notifications.inc({ kind: d.kind, outcome: 'quarantined' });
  done(status, { error: 'invalid notification', reason });
}

/**
 * Confirms a stored notification through ConfirmTrans, after it was answered, with the credentials of
 * the account it is filed under; a failure is logged (without the body) and changes nothing.
 */
function confirmLater(
  r: Receiver,
  confirm: ConfirmNotification,
  body: unknown,
  notification: NormalisedNotification,
  notificationId: number,
): void {
  confirm(body, notification)
    .then((answer) =>
      r.db
        .updateTable('notifications')
        .set({ confirmed_at: new Date().toISOString(), verification_code: answer.verificationCode })
        .where('notification_id', '=', notificationId)
        .execute(),
    )
    .catch((error: unknown) =>
      r.log(
        `confirm of notification ${notificationId} failed: ${(error as Error).name}: ${(error as Error).message}`,
      ),
    );
}
