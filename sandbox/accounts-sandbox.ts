/**
 * The sandbox provider with several merchant accounts behind one address, as the real provider
 * serves them: each account has its own client credentials, report merchant id, legacy merchant id
 * and password, and its own history (seed). A token is bound to the account whose credentials got
 * it; used on another account's resources (a `merchantList` naming another merchant, another
 * account's transaction) it gets 401, as do one account's legacy credentials on another's merchant id.
 *
 * Built from one single-account sandbox per account (sandbox/server.ts) behind a front on
 * 127.0.0.1 that authenticates and routes each request to its account's sandbox, so every endpoint,
 * format and fault of the single sandbox works per account (`sandbox(name).setFaults(...)`).
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHistory, type History } from './history.ts';
import { type Sandbox, type SandboxOptions, startSandbox } from './server.ts';

export interface SandboxAccountSpec {
  /** The account's name in RECON_ACCOUNTS_FILE. */
  readonly name: string;
  readonly seed: number | string;
  /** Report API merchant id (default derived from the name). */
  readonly merchantId?: string;
  /** Legacy merchant id, 8 characters (default derived from the account's position). */
  readonly legacyMerchantId?: string;
  /** Currency of all its transactions (default CAD with a few USD). */
  readonly currency?: string;
  /** Shared by accounts whose merchant transaction ids repeat (sandbox/history.ts). */
  readonly merchantTransactionTag?: string;
  /** A history built elsewhere (the merchant view's); the seed and ids are then the history's. */
  readonly history?: History;
  /** Options of the account's own sandbox (transactions, dates, notifications, faults, …). */
  readonly sandbox?: Omit<SandboxOptions, 'history' | 'port' | 'clientId'>;
}

export interface SandboxAccount {
  readonly name: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly merchantId: string;
  readonly legacyMerchantId: string;
  readonly legacyMerchantPass: string;
  readonly history: History;
  /** The account's own sandbox: faults, notifications, issued tokens. */
  readonly sandbox: Sandbox;
}

export interface AccountsSandbox {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly queryUrl: string;
  readonly accounts: readonly SandboxAccount[];
  account(name: string): SandboxAccount;
  /** Every access token issued to any account (tests check none leaks). */
  issuedTokens(): string[];
  /** Every secret of every account: client secrets and legacy passwords. */
  secrets(): string[];
  /**
   * An accounts file (JSON) for these accounts, with each secret referenced through an environment
   * variable, and the variables that hold the secrets: `{ file, env }` for RECON_ACCOUNTS_FILE.
   */
  accountsFile(options?: { environment?: 'staging' | 'production' }): {
    json: string;
    env: Record<string, string>;
  };
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function refuse(res: ServerResponse, status: number, body: unknown): void {
  if (typeof body === 'string') {
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  } else {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
}

/** The environment variable that holds one account's secret in {@link AccountsSandbox.accountsFile}. */
export function secretVariable(account: string, field: 'CLIENT_SECRET' | 'LEGACY_PASS'): string {
  return `RECON_SANDBOX_${account.toUpperCase().replaceAll('-', '_')}_${field}`;
}

/** Starts the accounts and the front that serves them on one address. */
export async function startAccountsSandbox(options: {
  accounts: readonly SandboxAccountSpec[];
  port?: number;
}): Promise<AccountsSandbox> {
  const accounts = await startAccounts(options.accounts);
  const front: Front = {
    accounts,
    byClient: new Map(accounts.map((a) => [a.clientId, a])),
    byLegacy: new Map(accounts.map((a) => [a.legacyMerchantId, a])),
    tokenOwner: new Map<string, SandboxAccount>(),
  };
  const server = createServer((req, res) => {
    route(front, req, res).catch(() => {
      if (!res.headersSent)
        refuse(res, 502, { errorCode: 'S502', errorMessage: 'sandbox account unreachable' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const find = (name: string) => {
    const a = accounts.find((x) => x.name === name);
    if (!a) throw new Error(`no sandbox account ${name}`);
    return a;
  };
  return {
    baseUrl: `${origin}/api`,
    authUrl: `${origin}/auth`,
    queryUrl: `${origin}/legacy/query`,
    accounts,
    account: find,
    issuedTokens: () => accounts.flatMap((a) => a.sandbox.issuedTokens()),
    secrets: () => accounts.flatMap((a) => [a.clientSecret, a.legacyMerchantPass]),
    accountsFile: (fileOptions = {}) => accountsFile(accounts, origin, fileOptions.environment ?? 'staging'),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(accounts.map((a) => a.sandbox.close()));
    },
  };
}

/** One sandbox per account, each with its own history and credentials; none left running on failure. */
async function startAccounts(specs: readonly SandboxAccountSpec[]): Promise<SandboxAccount[]> {
  const accounts: SandboxAccount[] = [];
  try {
    for (const [i, spec] of specs.entries()) {
      const history =
        spec.history ??
        createHistory({
          seed: spec.seed,
          transactions: spec.sandbox?.transactions ?? 1000,
          from: spec.sandbox?.from ?? '2026-10-20',
          to: spec.sandbox?.to ?? '2026-11-10',
          legacyConflictRate: spec.sandbox?.legacyConflictRate ?? 0,
          merchantId: spec.merchantId ?? `IBT-${spec.name}`.toUpperCase().slice(0, 30),
          legacyMerchantId: spec.legacyMerchantId ?? `EXF${String(i + 1).padStart(5, '0')}`,
          ...(spec.currency ? { currency: spec.currency } : {}),
          ...(spec.merchantTransactionTag ? { merchantTransactionTag: spec.merchantTransactionTag } : {}),
        });
      const sandbox = await startSandbox({
        ...spec.sandbox,
        history,
        clientId: `${spec.name}-client`,
      });
      accounts.push({
        name: spec.name,
        clientId: sandbox.clientId,
        clientSecret: sandbox.clientSecret,
        merchantId: history.options.merchantId,
        legacyMerchantId: sandbox.legacyMerchantId,
        legacyMerchantPass: sandbox.legacyMerchantPass,
        history,
        sandbox,
      });
    }
  } catch (error) {
    await Promise.all(accounts.map((a) => a.sandbox.close()));
    throw error;
  }
  return accounts;
}

/** What the front knows: the accounts by client id and legacy merchant id, and whose each token is. */
interface Front {
  readonly accounts: readonly SandboxAccount[];
  readonly byClient: ReadonlyMap<string, SandboxAccount>;
  readonly byLegacy: ReadonlyMap<string, SandboxAccount>;
  readonly tokenOwner: Map<string, SandboxAccount>;
}

/** Finds the account a request belongs to (client id, legacy merchant id or token) and forwards it. */
async function route(front: Front, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
  const body = await readBody(req);
  if (path === '/auth/oauth2/token') {
    const account = front.byClient.get(new URLSearchParams(body.toString('utf8')).get('client_id') ?? '');
    if (!account) {
      return refuse(res, 401, {
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    }
    const answer = await forward(account, req, res, body);
    if (answer) {
      const token = (JSON.parse(answer.toString('utf8')) as { access_token?: string }).access_token;
      if (typeof token === 'string') front.tokenOwner.set(token, account);
    }
    return;
  }
  if (path === '/legacy/query') {
    const account = front.byLegacy.get(new URLSearchParams(body.toString('utf8')).get('merchant_id') ?? '');
    if (!account) return refuse(res, 401, 'ERROR: invalid merchant_id or merchant_pass');
    await forward(account, req, res, body);
    return;
  }
  const bearer = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  const account = bearer === undefined ? undefined : front.tokenOwner.get(bearer);
  if (!account) return refuse(res, 401, { errorCode: 'A401', errorMessage: 'not authorized' });
  if (!ownsResources(front.accounts, account, body)) {
    return refuse(res, 401, {
      errorCode: 'A403',
      errorMessage: 'the access token has no permission on resources of another merchant account',
    });
  }
  await forward(account, req, res, body);
}

/** Sends the request on to the account's own sandbox and streams its answer back. */
function forward(account: SandboxAccount, req: IncomingMessage, res: ServerResponse, body: Buffer) {
  const target = new URL(account.sandbox.baseUrl);
  return new Promise<Buffer | null>((resolve, reject) => {
    const out = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // Token answers are small: kept to learn which account a token belongs to.
        if (req.url === '/auth/oauth2/token') {
          void readBody(answer).then((b) => {
            res.end(b);
            resolve(b);
          }, reject);
        } else {
          answer.pipe(res);
          answer.on('end', () => resolve(null));
          answer.on('error', (error) => {
            res.destroy(error);
            resolve(null);
          });
        }
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

/** False when a JSON body names a merchant or a transaction of another account. */
function ownsResources(accounts: readonly SandboxAccount[], account: SandboxAccount, body: Buffer): boolean {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return true; // the account's own sandbox answers a malformed body
  }
  const merchant = (json.merchant ?? {}) as Record<string, unknown>;
  const merchants = Array.isArray(merchant.merchantList) ? merchant.merchantList : [];
  if (merchants.some((m) => m !== account.merchantId)) return false;
  const ids = [json.transactionId, (json.transaction as Record<string, unknown> | undefined)?.transactionId];
  return !ids.some(
    (id) =>
      typeof id === 'string' &&
      !account.history.findByTransactionId(id) &&
      accounts.some((other) => other !== account && other.history.findByTransactionId(id)),
  );
}

/** {@link AccountsSandbox.accountsFile}: the accounts file, its secrets left in `env`. */
function accountsFile(
  accounts: readonly SandboxAccount[],
  origin: string,
  environment: 'staging' | 'production',
): { json: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const list = accounts.map((a) => {
    env[secretVariable(a.name, 'CLIENT_SECRET')] = a.clientSecret;
    env[secretVariable(a.name, 'LEGACY_PASS')] = a.legacyMerchantPass;
    return {
      name: a.name,
      environment,
      baseUrl: `${origin}/api`,
      authUrl: `${origin}/auth`,
      queryUrl: `${origin}/legacy/query`,
      clientId: a.clientId,
      clientSecret: { env: secretVariable(a.name, 'CLIENT_SECRET') },
      legacyMerchantId: a.legacyMerchantId,
      legacyMerchantPass: { env: secretVariable(a.name, 'LEGACY_PASS') },
    };
  });
  return { json: `${JSON.stringify({ accounts: list }, null, 2)}\n`, env };
}
