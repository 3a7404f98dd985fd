import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Config } from '../../lib/config.ts';
import { ConfigError } from '../../lib/errors.ts';
import { describeJsonError, redactPersonal } from '../../lib/privacy.ts';
import {
  type NotificationKind,
  type NormalisedNotification,
  normaliseNotification,
} from './normalise-notification.ts';
import { quarantineNotification, storeNotification } from './store-notification.ts';

/**
 * Pluggable confirmation through ConfirmTrans (provider-api.md 4.3): area 3's
 * `createProviderClient(config).confirmTransaction(body)` fits. Called after the notification is
 * committed and answered; its failure is logged (without the body) and never fails the delivery.
 */
export type ConfirmNotification = (
  body: unknown,
  notification: NormalisedNotification,
) => Promise<{ verificationCode: string | null }>;

export interface NotificationReceiverOptions {
  readonly handle: Pick<DatabaseHandle, 'db'>;
  readonly config: Pick<Config, 'notificationSecret'>;
  readonly port: number;
  readonly host?: string;
  /** Caller CIDRs allowed (RECON_NOTIFICATION_ALLOW, comma-separated); empty or absent: any caller. */
  readonly allow?: readonly string[];
  /** Largest body accepted, bytes (default 64 KiB); larger bodies are answered 413. */
  readonly maxBodyBytes?: number;
  readonly confirm?: ConfirmNotification;
  /** One line per request: method, path, status, reason. Never headers or bodies. */
  readonly log?: (line: string) => void;
}

export interface NotificationReceiver {
  readonly url: string;
  close(): Promise<void>;
}

const ROUTES: Record<string, NotificationKind> = {
  '/notifications/transaction': 'transaction',
  '/notifications/return': 'return',
};

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
  if (!header) return false;
  let presented: string | null = null;
  const [scheme = '', value = ''] = header.split(/\s+/, 2);
  if (scheme.toLowerCase() === 'bearer') presented = value;
  else if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    presented = colon >= 0 ? decoded.slice(colon + 1) : null;
  }
  if (presented === null) return false;
  // Hashing first gives equal lengths, so timingSafeEqual never leaks the secret's length.
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

class TooLarge extends Error {}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) throw new TooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new TooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reply(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Starts the notification receiver: `POST /notifications/transaction`, `POST /notifications/return`,
 * `GET /health`. A valid body is committed to `notifications` before the 200 is sent (so a 200 means
 * stored); a repeated delivery is counted on the same row. Malformed or out-of-limit bodies are kept
 * in `notification_quarantine` and answered 400 with the reason; unauthenticated callers get 401 and
 * nothing is stored. Refuses to start without RECON_NOTIFICATION_SECRET.
 */
export async function startNotificationReceiver(
  options: NotificationReceiverOptions,
): Promise<NotificationReceiver> {
  const secret = options.config.notificationSecret;
  if (!secret) {
    throw new ConfigError(
      'the notification receiver needs RECON_NOTIFICATION_SECRET: set it to the secret the provider sends as a bearer token or basic-auth password',
    );
  }
  const allowList = parseAllowList(options.allow ?? []);
  const limit = options.maxBodyBytes ?? 64 * 1024;
  const log = options.log ?? (() => {});
  const { db } = options.handle;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const done = (status: number, body: Record<string, unknown>) => {
      reply(res, status, body);
      log(`${req.method} ${path} ${status}${body.error ? ` ${String(body.error)}` : ''}`);
    };
    if (!allowed(allowList, req.socket.remoteAddress))
      return done(403, { error: 'caller address not allowed' });
    if (req.method === 'GET' && path === '/health') {
      await db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
      return done(200, { status: 'ok' });
    }
    const kind = ROUTES[path];
    if (!kind) return done(404, { error: 'not found' });
    if (req.method !== 'POST') return done(405, { error: 'use POST' });
    if (!authorised(req.headers.authorization, secret)) {
      req.resume();
      return done(401, { error: 'missing or wrong credentials' });
    }
    let text: string;
    try {
      text = await readBody(req, limit);
    } catch (error) {
      if (error instanceof TooLarge) {
        req.resume();
        return done(413, { error: `body larger than ${limit} bytes` });
      }
      throw error;
    }
    const quarantine = async (why: string) => {
      const reason = redactPersonal(why);
      await quarantineNotification(db, {
        kind,
        reason,
        body: text,
        contentType: req.headers['content-type'] ?? null,
        remoteAddress: req.socket.remoteAddress ?? null,
      });
      done(400, { error: 'invalid notification', reason });
    };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return quarantine(`body is not JSON: ${describeJsonError(error)}`);
    }
    const result = normaliseNotification(kind, body);
    if (!result.ok) return quarantine(result.reason);
    const stored = await storeNotification(db, result.value);
    done(200, { status: stored.inserted ? 'stored' : 'duplicate', notificationId: stored.notificationId });
    if (options.confirm) {
      options
        .confirm(body, result.value)
        .then((answer) =>
          db
            .updateTable('notifications')
            .set({ confirmed_at: new Date().toISOString(), verification_code: answer.verificationCode })
            .where('notification_id', '=', stored.notificationId)
            .execute(),
        )
        .catch((error: unknown) =>
          log(
            `confirm of notification ${stored.notificationId} failed: ${(error as Error).name}: ${(error as Error).message}`,
          ),
        );
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
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
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
