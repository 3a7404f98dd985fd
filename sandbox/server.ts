import { randomBytes, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_WINDOW_DAYS } from '../domain/sources.ts';
import { addDays, daysInclusive } from '../domain/time/calendar.ts';
import { easternDayStartMs as easternMidnightMs } from '../domain/time/eastern.ts';
import {
  LEGACY_DEFAULT_FIELDS,
  legacyAdjustmentLine,
  legacyReturnLine,
  legacyTransactionLine,
  linesInChunks,
} from './formats/legacy-csv.ts';
import { reportCsvChunks } from './formats/report-csv.ts';
import { reportJsonChunks } from './formats/report-json.ts';
import { zipSingleEntry } from './formats/zip-writer.ts';
import type { ReturnRecord, TransactionRecord } from '../domain/records.ts';
import { createHistory, type History, type HistoryTransaction } from './history.ts';
import {
  deliverNotification,
  notificationStatus,
  returnNotificationBody,
  transactionNotificationBody,
  type Delivery,
} from './notifications.ts';

/**
 * Faults on demand. Counts (`serverErrors: 2`) hit the next data requests, deterministically, for
 * tests; rates (`errorRate: 0.1`) hit requests at random, for demos. Data requests are every endpoint
 * but the token endpoint.
 */
export interface SandboxFaults {
  /** The next N data requests are answered 500. */
  serverErrors?: number;
  /** Fraction (0..1) of data requests answered 500. */
  errorRate?: number;
  /** The next N data requests are answered 429 with Retry-After. */
  rateLimits?: number;
  /** Fraction (0..1) of data requests answered 429. */
  rateLimitRate?: number;
  /** Retry-After value sent with 429: seconds ("1") or an HTTP date. Default "1". */
  retryAfter?: string;
  /** Delay before every data response, in milliseconds. */
  slowMs?: number;
  /** The next N report or legacy bodies are cut (connection destroyed) after cutAfterBytes. */
  cuts?: number;
  /** Fraction (0..1) of report and legacy bodies cut. */
  cutRate?: number;
  /** Bytes of body sent before a cut (default 2048). */
  cutAfterBytes?: number;
  /** Zipped reports end cleanly but lose their last part: no data descriptor, no central directory. */
  truncateZip?: boolean;
  /** Tokens stop working after this many milliseconds, whatever expires_in says. */
  tokenTtlMs?: number;
}

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

export interface SandboxStats {
  tokensIssued: number;
  requests: Record<string, number>;
  faultsInjected: Record<string, number>;
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

const LEGACY_FIELD_MAX = 22;
/** Bytes a truncated ZIP loses at its end. */
const TRUNCATED_TAIL = 512;

class HttpFailure extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}
const invalid = (errorCode: string, errorMessage: string) =>
  new HttpFailure(400, { errorCode, errorMessage });

/**
 * Starts the sandbox provider on 127.0.0.1: token, report (JSON, CSV, zipped), transaction status,
 * ConfirmTrans, interactive transactions and the legacy query, with faults on demand. Responses are
 * streamed from the history's generators, so report size does not change memory use.
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
  const merchantId = history.options.merchantId;
  const clientId = options.clientId ?? 'sandbox-client';
  const clientSecret = options.clientSecret ?? randomBytes(18).toString('base64url');
  const legacyMerchantId = history.options.legacyMerchantId;
  const legacyMerchantPass = options.legacyMerchantPass ?? randomBytes(10).toString('hex').slice(0, 16);
  const tokenExpiresIn = options.tokenExpiresIn ?? 1800;
  let faults: SandboxFaults = { ...options.faults };
  let asOf = options.asOf;
  const tokens = new Map<string, number>();
  const stats: SandboxStats = { tokensIssued: 0, requests: {}, faultsInjected: {} };
  const deliveries: Delivery[] = [];
  const confirmations: unknown[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const log = options.log ?? (() => {});

  const count = (bag: Record<string, number>, key: string) => {
    bag[key] = (bag[key] ?? 0) + 1;
  };
  const takeFault = (counter: 'serverErrors' | 'rateLimits' | 'cuts', rate: number | undefined) => {
    const left = faults[counter] ?? 0;
    if (left > 0) {
      faults = { ...faults, [counter]: left - 1 };
      return true;
    }
    return rate !== undefined && rate > 0 && Math.random() < rate;
  };

  const targets = notificationTargets(options.notifyUrl, options.returnNotifyUrl);
  function sendNotification(kind: 'transaction' | 'return', f: HistoryTransaction): Promise<void> {
    const url = targets?.[kind];
    if (!url) return Promise.resolve();
    const body =
      kind === 'transaction'
        ? transactionNotificationBody(f, merchantId)
        : returnNotificationBody(f, merchantId);
    const p = deliverNotification(url, kind, body, {
      attempts: options.notifyAttempts ?? 5,
      backoffMs: options.notifyBackoffMs ?? 200,
      secret: options.notifySecret,
    }).then((d) => {
      deliveries.push(d);
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpFailure) {
        sendJson(res, error.status, error.body);
      } else if (!res.headersSent) {
        sendJson(res, 500, { errorCode: 'S500', errorMessage: 'internal system error' });
      } else {
        res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
    res.on('finish', () => log(`${req.method} ${path} ${res.statusCode}`));
    if (req.method !== 'POST') throw new HttpFailure(405, { errorCode: 'M405', errorMessage: 'use POST' });
    count(stats.requests, path);
    if (path === '/auth/oauth2/token') return token(req, res);
    const route = routes[path];
    if (!route) throw new HttpFailure(404, { errorCode: 'N404', errorMessage: `no endpoint ${path}` });
    if (faults.slowMs) await new Promise((r) => setTimeout(r, faults.slowMs));
    if (takeFault('rateLimits', faults.rateLimitRate)) {
      count(stats.faultsInjected, '429');
      await readBody(req);
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': faults.retryAfter ?? '1' });
      res.end(JSON.stringify({ errorCode: 'R429', errorMessage: 'too many requests' }));
      return;
    }
    if (takeFault('serverErrors', faults.errorRate)) {
      count(stats.faultsInjected, '500');
      await readBody(req);
      throw new HttpFailure(500, { errorCode: 'S500', errorMessage: 'internal system error' });
    }
    return route(req, res);
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    if (!String(req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
      throw new HttpFailure(400, {
        error: 'invalid_request',
        error_description: 'form-encoded body expected',
      });
    }
    if (form.get('grant_type') !== 'client_credentials') {
      throw new HttpFailure(400, {
        error: 'unsupported_grant_type',
        error_description: 'use client_credentials',
      });
    }
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      throw new HttpFailure(401, {
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    }
    const accessToken = `sbx.${randomBytes(24).toString('base64url')}`;
    const ttlMs = faults.tokenTtlMs ?? tokenExpiresIn * 1000;
    tokens.set(accessToken, Date.now() + ttlMs);
    stats.tokensIssued++;
    sendJson(res, 200, {
      access_token: accessToken,
      expires_in: String(tokenExpiresIn),
      token_type: 'Bearer',
    });
  }

  function authorize(req: IncomingMessage): void {
    const header = String(req.headers.authorization ?? '');
    const m = /^Bearer (\S+)$/.exec(header);
    const expiresAt = m ? tokens.get(m[1]!) : undefined;
    if (expiresAt === undefined || expiresAt <= Date.now()) {
      throw new HttpFailure(401, {
        errorCode: 'A401',
        errorMessage: expiresAt === undefined ? 'not authorized' : 'access token expired',
      });
    }
  }

  async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
    const text = await readBody(req);
    if (!String(req.headers['content-type'] ?? '').includes('application/json')) {
      throw invalid('V001', 'Content-Type must be application/json');
    }
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value))
        return value as Record<string, unknown>;
    } catch {
      // answered below
    }
    throw invalid('V002', 'request body is not a JSON object');
  }

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>> = {
    '/api/report/v4/report': report,
    '/api/report/v4/transaction-status': transactionStatus,
    '/api/service/servlet/ConfirmTrans': confirmTrans,
    '/txn/transaction/v4/interactive': interactive,
    '/legacy/query': legacyQuery,
  };

  async function report(req: IncomingMessage, res: ServerResponse): Promise<void> {
    authorize(req);
    const body = await jsonBody(req);
    const products = Array.isArray(body.productList) ? body.productList : [body.productList];
    if (products.length !== 1 || products[0] !== 'IBT') {
      throw invalid('V010', 'productList must be ["IBT"]');
    }
    const rep = body.report as Record<string, unknown> | undefined;
    if (!rep || typeof rep !== 'object') throw invalid('V011', 'report is required');
    if (rep.queryType === undefined || rep.queryType === null || rep.queryType === '') {
      throw invalid('V026', 'The report query type was not specified');
    }
    if (rep.queryType !== 'TRANSACTION' && rep.queryType !== 'RETURN') {
      throw invalid('V027', `queryType ${JSON.stringify(rep.queryType)} is not TRANSACTION or RETURN`);
    }
    const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    for (const key of ['startDateTime', 'endDateTime'] as const) {
      if (typeof rep[key] !== 'string' || !isoMs.test(rep[key]) || Number.isNaN(Date.parse(rep[key]))) {
        throw invalid(
          'V030',
          `${key} must be UTC ISO 8601 with milliseconds and Z, e.g. 2026-11-01T04:00:00.000Z`,
        );
      }
    }
    const start = rep.startDateTime as string;
    const end = rep.endDateTime as string;
    if (Date.parse(end) <= Date.parse(start))
      throw invalid('V031', 'endDateTime must be after startDateTime');
    if (rep.outputType !== 'JSON' && rep.outputType !== 'CSV') {
      throw invalid('V032', 'outputType must be JSON or CSV');
    }
    const zip = rep.outputZipFile === true || rep.outputZipFile === 'true';
    if (
      rep.outputZipFile !== undefined &&
      !zip &&
      rep.outputZipFile !== false &&
      rep.outputZipFile !== 'false'
    ) {
      throw invalid('V033', 'outputZipFile must be true or false');
    }
    const merchant = (body.merchant ?? {}) as Record<string, unknown>;
    const txn = (body.transaction ?? {}) as Record<string, unknown>;
    const merchantList = Array.isArray(merchant.merchantList) ? merchant.merchantList : null;
    const mtids = Array.isArray(merchant.merchantTransactionList)
      ? new Set(merchant.merchantTransactionList)
      : null;
    const wanted = (r: TransactionRecord | ReturnRecord): boolean => {
      if (merchantList && !merchantList.includes(merchantId)) return false;
      if (mtids && !mtids.has(r.merchant_transaction_id)) return false;
      if (r.kind === 'transaction') {
        if (txn.transactionId !== undefined && r.transaction_id !== txn.transactionId) return false;
        if (txn.transactionType !== undefined && r.raw_transaction_type !== txn.transactionType) return false;
        if (txn.transactionStatus !== undefined && r.raw_status !== txn.transactionStatus) return false;
        if (txn.currencyCode !== undefined && r.currency !== txn.currencyCode) return false;
      } else if (txn.transactionId !== undefined && r.return_transaction_id !== txn.transactionId) {
        return false;
      }
      return true;
    };
    const query = { start, end, asOf };
    const records = (function* () {
      const source = rep.queryType === 'TRANSACTION' ? history.transactions(query) : history.returns(query);
      for (const r of source) if (wanted(r)) yield r;
    })();
    const text =
      rep.outputType === 'JSON' ? reportJsonChunks(records) : reportCsvChunks(rep.queryType, records);
    const entry = `${String(rep.queryType).toLowerCase()}-report.${rep.outputType === 'JSON' ? 'json' : 'csv'}`;
    await stream(
      res,
      zip ? 'application/zip' : rep.outputType === 'JSON' ? 'application/json' : 'text/csv; charset=utf-8',
      zip ? zipSingleEntry(entry, text) : text,
      zip,
    );
  }

  async function stream(
    res: ServerResponse,
    contentType: string,
    chunks: AsyncIterable<string | Buffer>,
    zipped: boolean,
  ): Promise<void> {
    const cut = takeFault('cuts', faults.cutRate);
    const cutAfter = faults.cutAfterBytes ?? 2048;
    const truncate = zipped && faults.truncateZip === true;
    if (cut) count(stats.faultsInjected, 'cut');
    if (truncate) count(stats.faultsInjected, 'truncated-zip');
    res.writeHead(200, { 'content-type': contentType });
    res.flushHeaders();
    let sent = 0;
    let tail = Buffer.alloc(0);
    for await (const chunk of chunks) {
      let buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (truncate) {
        // A truncated archive is everything but its last bytes (last deflate block, data descriptor,
        // central directory): hold back a rolling tail and never send it.
        tail = Buffer.concat([tail, buffer]);
        if (tail.length > TRUNCATED_TAIL) {
          await write(res, tail.subarray(0, tail.length - TRUNCATED_TAIL));
          tail = Buffer.from(tail.subarray(tail.length - TRUNCATED_TAIL));
        }
        continue;
      }
      if (cut && sent + buffer.length > cutAfter) {
        buffer = buffer.subarray(0, Math.max(0, cutAfter - sent));
        // Let the bytes reach the client before the connection goes, as a real cut would.
        await new Promise<void>((resolve) => res.write(buffer, () => resolve()));
        await new Promise((resolve) => setTimeout(resolve, 20));
        res.destroy();
        return;
      }
      sent += buffer.length;
      await write(res, buffer);
      if (res.destroyed) return;
    }
    if (cut) {
      res.destroy(); // shorter than cutAfterBytes: cut at the very end, before the chunked terminator
      return;
    }
    res.end();
  }

  async function transactionStatus(req: IncomingMessage, res: ServerResponse): Promise<void> {
    authorize(req);
    const body = await jsonBody(req);
    if (typeof body.transactionId !== 'string' || body.transactionId === '') {
      throw invalid('V040', 'transactionId is required');
    }
    const f = history.findByTransactionId(body.transactionId);
    if (!f) throw invalid('V041', `transaction ${body.transactionId} was not found`);
    const asOfUs = asOf ? Date.parse(asOf) * 1000 : Number.MAX_SAFE_INTEGER;
    const returned = f.return && f.return.returnedAtMicros <= asOfUs ? f.return : null;
    const status =
      asOfUs < f.settledAtMicros
        ? 'PENDING'
        : returned
          ? returned.nextActionDate
            ? 'RETURNED_WITH_REPRESENTMENT'
            : 'RETURNED'
          : notificationStatus(f);
    sendJson(res, 200, {
      merchant: {
        merchantId,
        merchantTransactionId: f.merchantTransactionId,
        merchantUserId: f.merchantUserId,
      },
      transaction: {
        transactionType: f.type,
        transactionFee: status === 'PENDING' ? 0 : f.feeCents,
        transactionStatus: status,
        currencyCode: f.currency,
        transactionId: f.transactionId,
        paymentMethod: 'EFT',
        errorCode: status === 'PENDING' ? null : f.errorCode,
        ...(returned ? { returnCode: returned.returnCode, nextActionDate: returned.nextActionDate } : {}),
      },
      account: {
        accountMask: f.accountLabel,
        bankName: f.bankName,
        obvToken: f.accountToken,
        accountType: f.accountType,
      },
    });
  }

  async function confirmTrans(req: IncomingMessage, res: ServerResponse): Promise<void> {
    authorize(req);
    const body = await jsonBody(req);
    const merchant = body.merchant as Record<string, unknown> | undefined;
    const transaction = body.transaction as Record<string, unknown> | undefined;
    if (!merchant || typeof merchant.merchantTransactionId !== 'string') {
      throw invalid('V050', 'merchant.merchantTransactionId is required');
    }
    if (!transaction || typeof transaction.transactionId !== 'string') {
      throw invalid('V051', 'transaction.transactionId is required');
    }
    confirmations.push(body);
    const code = createHash('sha256').update(`${transaction.transactionId}`).digest('hex').slice(0, 12);
    sendJson(res, 200, { verification_code: `VC${code.toUpperCase()}` });
  }

  async function interactive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    authorize(req);
    const body = await jsonBody(req);
    const merchant = (body.merchant ?? {}) as Record<string, unknown>;
    const amount = body.transactionAmount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount)) {
      throw invalid('V060', 'transactionAmount must be an integer');
    }
    const type = body.transactionType ?? merchant.merchantTransactionType;
    if (type !== 'DEBIT' && type !== 'CREDIT')
      throw invalid('V061', 'transactionType must be DEBIT or CREDIT');
    const mtid = merchant.merchantTransactionId;
    if (typeof mtid !== 'string' || mtid.length < 1 || mtid.length > 30) {
      throw invalid('V062', 'merchant.merchantTransactionId must have 1 to 30 characters');
    }
    const muid = merchant.merchantUserId;
    if (typeof muid !== 'string' || muid.length < 3 || muid.length > 64) {
      throw invalid('V063', 'merchant.merchantUserId must have 3 to 64 characters');
    }
    const currency = typeof body.currencyCode === 'string' ? body.currencyCode : 'CAD';
    if (!/^[A-Z]{3}$/.test(currency)) throw invalid('V064', 'currencyCode must be ISO 4217');
    const f = history.add({
      type,
      amountCents: amount,
      currency,
      merchantTransactionId: mtid,
      merchantUserId: muid,
      region: typeof body.transactionRegion === 'string' ? body.transactionRegion : undefined,
      countryCode: typeof body.countryCode === 'string' ? body.countryCode : undefined,
    });
    sendJson(res, 200, {
      transactionId: f.transactionId,
      transactionStatus: notificationStatus(f),
      errorCode: f.errorCode,
      errorMessage: f.errorMessage,
      redirectUrl: `${baseUrl}/consumer/${f.transactionId}`,
    });
    void sendNotification('transaction', f);
  }

  async function legacyQuery(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const plain = (status: number, message: string) => new HttpFailure(status, message);
    if (!String(req.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded')) {
      throw plain(400, 'ERROR: form-encoded body expected');
    }
    const form = new URLSearchParams(text);
    for (const key of new Set(form.keys())) {
      if (form.getAll(key).length > 1) throw plain(400, `ERROR: parameter ${key} given more than once`);
    }
    if (form.get('merchant_id') !== legacyMerchantId || form.get('merchant_pass') !== legacyMerchantPass) {
      throw plain(401, 'ERROR: invalid merchant_id or merchant_pass');
    }
    const type = form.get('query_type') ?? '';
    if (!['1', '4', '5', '6'].includes(type)) throw plain(400, `ERROR: query_type ${type} is not supported`);
    const sdate = form.get('query_sdate') ?? '';
    const edate = form.get('query_edate') ?? '';
    if (!/^\d{8}$/.test(sdate) || !/^\d{8}$/.test(edate)) throw plain(400, 'ERROR: dates must be YYYYMMDD');
    const from = `${sdate.slice(0, 4)}-${sdate.slice(4, 6)}-${sdate.slice(6)}`;
    const to = `${edate.slice(0, 4)}-${edate.slice(4, 6)}-${edate.slice(6)}`;
    const span = daysInclusive(from, to);
    if (span < 1) throw plain(400, 'ERROR: query_edate is before query_sdate');
    if (span > MAX_WINDOW_DAYS) throw plain(400, `ERROR: date range exceeds ${MAX_WINDOW_DAYS} days`);
    const txnNum = form.get('merchant_txn_num')?.trim() || null;
    let fields: number[] = type === '5' || type === '6' ? [...LEGACY_DEFAULT_FIELDS[type]] : [];
    const rf = form.get('response_fields');
    if (rf && (type === '5' || type === '6')) {
      const list = rf.split(',').map((s) => Number(s.trim()));
      if (list.some((n) => !Number.isInteger(n) || n < 1 || n > LEGACY_FIELD_MAX)) {
        throw plain(400, 'ERROR: response_fields holds an unknown field');
      }
      if (new Set(list).size !== list.length) throw plain(400, 'ERROR: response_fields holds a duplicate');
      if (type === '5' && list.includes(19))
        throw plain(400, 'ERROR: field 19 is not valid for query type 5');
      fields = list;
    }
    const query = {
      start: new Date(easternMidnightMs(from)).toISOString(),
      end: new Date(easternMidnightMs(addDays(to, 1))).toISOString(),
      asOf,
    };
    const lines = (function* () {
      if (type === '5' || type === '6') {
        for (const r of history.legacyTransactions({ ...query, queryType: type })) {
          if (!txnNum || r.merchant_transaction_id === txnNum) yield legacyTransactionLine(r, fields);
        }
      } else if (type === '1') {
        for (const r of history.legacyReturns(query)) {
          if (!txnNum || r.merchant_transaction_id === txnNum) yield legacyReturnLine(r);
        }
      } else {
        for (const r of history.adjustments(query)) yield legacyAdjustmentLine(r);
      }
    })();
    await stream(res, 'text/plain; charset=utf-8', linesInChunks(lines), false);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const baseUrl = `${origin}/api`;

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
    stats,
    deliveries,
    confirmations,
    issuedTokens() {
      return [...tokens.keys()];
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
      faults = { ...next };
    },
    setAsOf(next) {
      asOf = next;
    },
    async notify(query = {}) {
      let sent = 0;
      const before = deliveries.length;
      const jobs: Promise<void>[] = [];
      for (const f of history.facts({ ...query, asOf })) {
        if (f.channel === 'legacy' || f.notifyStatus === 'I') continue;
        jobs.push(sendNotification('transaction', f));
        sent++;
      }
      const asOfUs = asOf ? Date.parse(asOf) * 1000 : Number.MAX_SAFE_INTEGER;
      const startUs = query.start ? Date.parse(query.start) * 1000 : Number.MIN_SAFE_INTEGER;
      const endUs = query.end ? Date.parse(query.end) * 1000 : Number.MAX_SAFE_INTEGER;
      for (const f of history.facts({ asOf })) {
        const r = f.return;
        if (!r || f.channel === 'legacy' || r.returnedAtMicros < startUs || r.returnedAtMicros >= endUs)
          continue;
        if (r.returnedAtMicros > asOfUs) continue;
        jobs.push(sendNotification('return', f));
        sent++;
      }
      await Promise.all(jobs);
      return { sent, delivered: deliveries.slice(before).filter((d) => d.delivered).length };
    },
    async drainNotifications() {
      await Promise.all([...inFlight]);
    },
    async close() {
      await Promise.all([...inFlight]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Where each kind of notification goes; see {@link SandboxOptions.notifyUrl}. */
export function notificationTargets(
  notifyUrl: string | undefined,
  returnNotifyUrl?: string,
): { transaction: string; return: string } | null {
  if (!notifyUrl) return null;
  const url = new URL(notifyUrl);
  if (url.pathname === '/' || url.pathname === '') {
    return {
      transaction: `${url.origin}/notifications/transaction`,
      return: returnNotifyUrl ?? `${url.origin}/notifications/return`,
    };
  }
  return {
    transaction: notifyUrl,
    return: returnNotifyUrl ?? notifyUrl.replace(/\/transaction$/, '/return'),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage, limit = 1_000_000): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new HttpFailure(413, { errorCode: 'V413', errorMessage: 'request body too large' });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function write(res: ServerResponse, buffer: Buffer): Promise<void> {
  if (buffer.length === 0 || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    if (res.write(buffer)) resolve();
    else {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    }
  });
}
