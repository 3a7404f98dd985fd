import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';
import {
  createProviderClient,
  LegacyQueryRefused,
  ProviderAuthFailed,
  ProviderRejectedRequest,
  ProviderStreamBroken,
  ProviderUnavailable,
  RateLimited,
  type ProviderClient,
  type ProviderClientOptions,
} from '../../provider/client/index.ts';
import { startSandbox, type Sandbox } from '../../sandbox/server.ts';

// The client against the sandbox provider over real HTTP on 127.0.0.1: every endpoint, every fault.

const FAST: ProviderClientOptions = { baseDelayMs: 5, maxDelayMs: 2_000, maxAttempts: 3 };
const WINDOW = { start: '2026-10-26T04:00:00.000Z', end: '2026-10-27T04:00:00.000Z' };

let sandbox: Sandbox;
const clients: ProviderClient[] = [];

function clientFor(env: Record<string, string> = sandbox.env(), options: ProviderClientOptions = FAST) {
  const client = createProviderClient(loadConfig(env), { env: {}, ...options });
  clients.push(client);
  return client;
}

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 7, transactions: 600, from: '2026-10-20', to: '2026-11-05' });
});
beforeEach(() => sandbox.setFaults({}));
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sandbox.close();
});

describe('token', () => {
  it('is requested once, cached, and shared by concurrent callers (single-flight)', async () => {
    const client = clientFor();
    const before = sandbox.stats.tokensIssued;
    const bodies = await Promise.all(
      Array.from({ length: 5 }, async () =>
        text((await client.report({ queryType: 'TRANSACTION', ...WINDOW })).stream),
      ),
    );
    await text((await client.report({ queryType: 'RETURN', ...WINDOW })).stream);
    expect(client.tokenRequests).toBe(1);
    expect(sandbox.stats.tokensIssued - before).toBe(1);
    expect(new Set(bodies).size).toBe(1);
    const expected = [...sandbox.history.transactions(WINDOW)].length;
    expect(JSON.parse(bodies[0]!)).toHaveLength(expected);
    expect(expected).toBeGreaterThan(10);
  });

  it('is refreshed before expires_in (a string) runs out', async () => {
    const short = await startSandbox({ seed: 7, transactions: 50, tokenExpiresIn: 1 });
    try {
      const client = clientFor(short.env());
      await client.transactionStatus(short.history.fact(3).transactionId);
      await client.transactionStatus(short.history.fact(3).transactionId);
      expect(client.tokenRequests).toBe(1);
      await new Promise((r) => setTimeout(r, 600)); // refreshed at half of a 1 s lifetime
      await client.transactionStatus(short.history.fact(3).transactionId);
      expect(client.tokenRequests).toBe(2);
    } finally {
      await short.close();
    }
  });

  it('a 401 on an expired token gets one fresh token and the call succeeds', async () => {
    const client = clientFor();
    const id = sandbox.history.fact(1).transactionId;
    // The token says 1800 s but dies after 2 s: long enough for the first call to use it on a loaded
    // machine (at 30 ms, a busy CI host saw the fresh token die before its first use).
    sandbox.setFaults({ tokenTtlMs: 2000 });
    await client.transactionStatus(id);
    sandbox.setFaults({});
    await new Promise((r) => setTimeout(r, 2100)); // every token issued so far is dead now
    // Counted from here: on a loaded machine the first call itself may already have needed a refresh.
    const before = client.tokenRequests;
    const status = await client.transactionStatus(id);
    expect((status.transaction as { transactionId: string }).transactionId).toBe(id);
    expect(client.tokenRequests).toBe(before + 1);
  });

  it('a 401 with a fresh token is ProviderAuthFailed, not retryable', async () => {
    const client = clientFor();
    sandbox.setFaults({ tokenTtlMs: 0 });
    const error = await failure(client.transactionStatus(sandbox.history.fact(1).transactionId));
    expect(error).toBeInstanceOf(ProviderAuthFailed);
    expect((error as ProviderAuthFailed).retryable).toBe(false);
    expect(error.message).toBe(
      'transaction status of ' +
        sandbox.history.fact(1).transactionId +
        ': the provider refused a freshly issued token (HTTP 401): check RECON_CLIENT_ID / RECON_CLIENT_SECRET and the permissions of the staging client',
    );
    expect(client.tokenRequests).toBe(2);
  });

  it('wrong client credentials: ProviderAuthFailed naming the variables', async () => {
    const client = clientFor({ ...sandbox.env(), RECON_CLIENT_SECRET: 'not-the-secret' });
    const error = await failure(client.report({ queryType: 'TRANSACTION', ...WINDOW }));
    expect(error).toBeInstanceOf(ProviderAuthFailed);
    expect(error.message).toBe(
      'the token endpoint refused the client credentials (HTTP 401): check RECON_CLIENT_ID / RECON_CLIENT_SECRET for the staging environment',
    );
    expect(error.message).not.toContain('not-the-secret');
  });
});

describe('report', () => {
  it('streams JSON, CSV and zipped bodies with the content type', async () => {
    const client = clientFor();
    const json = await client.report({ queryType: 'TRANSACTION', ...WINDOW });
    expect(json.contentType).toBe('application/json');
    expect(json.zipped).toBe(false);
    await text(json.stream);
    const csv = await client.report({ queryType: 'RETURN', ...WINDOW, outputType: 'CSV' });
    expect((await text(csv.stream)).split('\n')[0]).toMatch(/^Settlement Date,Settlement Code,Return Code,/);
    const zip = await client.report({ queryType: 'TRANSACTION', ...WINDOW, zip: true });
    expect(zip.zipped).toBe(true);
    const bytes = Buffer.from(await text(zip.stream), 'latin1');
    expect(bytes.subarray(0, 4).toString('hex')).toBe('504b0304');
  });

  it('a missing queryType is answered V026: ProviderRejectedRequest, not retryable', async () => {
    const client = clientFor();
    const error = await failure(client.report({ queryType: '' as 'TRANSACTION', ...WINDOW }));
    expect(error).toBeInstanceOf(ProviderRejectedRequest);
    expect(error).toMatchObject({ status: 400, errorCode: 'V026', retryable: false });
    expect(error.message).toBe(
      `report  ${WINDOW.start}..${WINDOW.end} refused by the provider (HTTP 400: V026 The report query type was not specified); the request is invalid; fix it, retrying will not help`,
    );
  });

  it('answers malformed report requests 400 and bad tokens 401, as the provider does', async () => {
    const token = await request(`${sandbox.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: sandbox.clientId,
        client_secret: sandbox.clientSecret,
      }).toString(),
    }).then((r) => r.body.json() as Promise<{ access_token: string }>);
    const post = (body: unknown, bearer = token.access_token) =>
      request(`${sandbox.baseUrl}/report/v4/report`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify(body),
      }).then(async (r) => [r.statusCode, ((await r.body.json()) as { errorCode: string }).errorCode]);
    const report = {
      queryType: 'TRANSACTION',
      startDateTime: WINDOW.start,
      endDateTime: WINDOW.end,
      outputType: 'JSON',
    };
    expect(await post({ productList: ['IBT'], report })).toEqual([200, undefined]);
    expect(await post({ productList: 'IBT', report: { ...report, outputZipFile: 'false' } })).toEqual([
      200,
      undefined,
    ]);
    expect(await post({ productList: ['XYZ'], report })).toEqual([400, 'V010']);
    expect(await post({ productList: ['IBT'] })).toEqual([400, 'V011']);
    expect(await post({ productList: ['IBT'], report: { ...report, queryType: undefined } })).toEqual([
      400,
      'V026',
    ]);
    expect(await post({ productList: ['IBT'], report: { ...report, queryType: 'ALL' } })).toEqual([
      400,
      'V027',
    ]);
    expect(
      await post({ productList: ['IBT'], report: { ...report, startDateTime: '2026-10-26T04:00:00Z' } }),
    ).toEqual([400, 'V030']);
    expect(await post({ productList: ['IBT'], report: { ...report, endDateTime: WINDOW.start } })).toEqual([
      400,
      'V031',
    ]);
    expect(await post({ productList: ['IBT'], report: { ...report, outputType: 'XML' } })).toEqual([
      400,
      'V032',
    ]);
    expect(await post({ productList: ['IBT'], report }, 'forged-token')).toEqual([401, 'A401']);
  });

  it('recovers from 500s within its attempts', async () => {
    const client = clientFor();
    sandbox.setFaults({ serverErrors: 2 });
    const res = await client.report({ queryType: 'RETURN', ...WINDOW });
    await text(res.stream);
    expect(sandbox.stats.faultsInjected['500']).toBeGreaterThanOrEqual(2);
  });

  it('persistent 500s: ProviderUnavailable, retryable, after the bounded attempts', async () => {
    const client = clientFor();
    sandbox.setFaults({ serverErrors: 100 });
    const error = await failure(client.report({ queryType: 'RETURN', ...WINDOW }));
    expect(error).toBeInstanceOf(ProviderUnavailable);
    expect(error).toMatchObject({ status: 500, attempts: 3, retryable: true });
    expect(error.message).toBe(
      `report RETURN ${WINDOW.start}..${WINDOW.end}: the provider answered HTTP 500 3 time(s); retry later`,
    );
  });

  it('429 with Retry-After in seconds is waited out, then the call succeeds', async () => {
    const client = clientFor();
    await client.transactionStatus(sandbox.history.fact(2).transactionId);
    sandbox.setFaults({ rateLimits: 1, retryAfter: '1' });
    const started = Date.now();
    await client.transactionStatus(sandbox.history.fact(2).transactionId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  });

  it('429 asking for longer than the client waits: RateLimited with retryAfterMs (date form)', async () => {
    const client = clientFor();
    const at = new Date(Date.now() + 120_000).toUTCString();
    sandbox.setFaults({ rateLimits: 5, retryAfter: at });
    const error = await failure(client.report({ queryType: 'TRANSACTION', ...WINDOW }));
    expect(error).toBeInstanceOf(RateLimited);
    expect((error as RateLimited).retryable).toBe(true);
    expect((error as RateLimited).retryAfterMs).toBeGreaterThan(100_000);
    expect((error as RateLimited).retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it('slow answers: within the headers timeout they succeed, beyond it ProviderUnavailable', async () => {
    sandbox.setFaults({ slowMs: 150 });
    await text((await clientFor().report({ queryType: 'RETURN', ...WINDOW })).stream);
    // undici's timers tick at about one second beyond 1 s, hence the long values here.
    sandbox.setFaults({ slowMs: 2500 });
    const impatient = clientFor(sandbox.env(), { ...FAST, maxAttempts: 1, headersTimeoutMs: 1000 });
    const error = await failure(impatient.transactionStatus(sandbox.history.fact(2).transactionId));
    expect(error).toBeInstanceOf(ProviderUnavailable);
    expect(error.message).toMatch(
      /no answer from the provider at 127\.0\.0\.1:\d+ \(UND_ERR_HEADERS_TIMEOUT\) after 1 attempt\(s\): check RECON_BASE_URL and that the provider is reachable from here, then retry$/,
    );
  });

  it('a body cut mid-way surfaces from the stream as ProviderStreamBroken, retryable', async () => {
    const client = clientFor();
    sandbox.setFaults({ cuts: 1, cutAfterBytes: 1000 });
    const res = await client.report({ queryType: 'TRANSACTION', ...WINDOW });
    const error = await failure(text(res.stream));
    expect(error).toBeInstanceOf(ProviderStreamBroken);
    expect(error).toMatchObject({ retryable: true, bytesReceived: 1000 });
    expect(error.message).toMatch(
      /^report TRANSACTION .*: the response stopped after 1000 bytes \(\w+\); fetch it again$/,
    );
  });

  it('no server at all: ProviderUnavailable naming the network error', async () => {
    const closed = await startSandbox({ transactions: 10 });
    const env = closed.env();
    await closed.close();
    const error = await failure(clientFor(env).report({ queryType: 'TRANSACTION', ...WINDOW }));
    expect(error).toBeInstanceOf(ProviderUnavailable);
    const auth = new URL(env.RECON_AUTH_URL as string);
    expect(error.message).toBe(
      `token request: no answer from the provider at ${auth.host} (ECONNREFUSED) after 3 attempt(s): check RECON_AUTH_URL and that the provider is reachable from here, then retry`,
    );
    expect(error.message).not.toContain(env.RECON_CLIENT_SECRET as string);
  });
});

describe('transaction status and ConfirmTrans', () => {
  it('answers the lookup with the returned status, code and representment date', async () => {
    const client = clientFor();
    // RETURNED_WITH_REPRESENTMENT only where the provider announces a re-debit (as the notification
    // says); a next action date alone answers RETURNED.
    let returned = sandbox.history.fact(0);
    for (let i = 0; !returned.return?.representment; i++) returned = sandbox.history.fact(i);
    let plain = sandbox.history.fact(0);
    for (let i = 0; !plain.return?.nextActionDate || plain.return.representment; i++)
      plain = sandbox.history.fact(i);
    const plainAnswer = await client.transactionStatus(plain.transactionId);
    expect(plainAnswer.transaction).toMatchObject({
      transactionStatus: 'RETURNED',
      nextActionDate: plain.return!.nextActionDate,
    });
    const answer = await client.transactionStatus(returned.transactionId);
    expect(answer.transaction).toEqual({
      transactionType: returned.type,
      transactionFee: returned.feeCents,
      transactionStatus: 'RETURNED_WITH_REPRESENTMENT',
      currencyCode: returned.currency,
      transactionId: returned.transactionId,
      paymentMethod: 'EFT',
      errorCode: null,
      returnCode: returned.return!.returnCode,
      nextActionDate: returned.return!.nextActionDate,
    });
    const unknown = await failure(client.transactionStatus('T-NOPE'));
    expect(unknown).toMatchObject({ status: 400, errorCode: 'V041', retryable: false });
  });

  it('ConfirmTrans returns a verification code', async () => {
    const client = clientFor();
    const f = sandbox.history.fact(4);
    const answer = await client.confirmTransaction({
      merchant: { merchantId: 'IBTMERCH0001', merchantTransactionId: f.merchantTransactionId },
      transaction: { transactionId: f.transactionId, transactionStatus: 'SUCCESS' },
    });
    expect(answer.verification_code).toMatch(/^VC[0-9A-F]{12}$/);
    expect(sandbox.confirmations.length).toBeGreaterThanOrEqual(1);
  });
});

describe('interactive transactions and notifications', () => {
  it('rejects amounts outside 100..100000000, accepts others, reports and notifies them (with retries)', async () => {
    const received: { path: string; body: unknown; auth: string | undefined }[] = [];
    let refuseFirst = 1;
    const receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (refuseFirst-- > 0) {
          res.writeHead(503).end();
          return;
        }
        received.push({
          path: req.url ?? '',
          body: JSON.parse(Buffer.concat(chunks).toString()),
          auth: req.headers.authorization,
        });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/notifications/transaction`;
    const live = await startSandbox({
      transactions: 20,
      notifyUrl: url,
      notifySecret: 'notify-secret',
      notifyBackoffMs: 10,
    });
    try {
      const token = await request(`${live.authUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: live.clientId,
          client_secret: live.clientSecret,
        }).toString(),
      }).then((r) => r.body.json() as Promise<{ access_token: string; expires_in: string }>);
      expect(token.expires_in).toBe('1800');
      const start = (amount: number, mtid: string) =>
        request(`${live.transactionBaseUrl}/transaction/v4/interactive`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token.access_token}` },
          body: JSON.stringify({
            product: 'IBT',
            countryCode: 'CA',
            merchant: {
              merchantId: 'IBTMERCH0001',
              merchantUserId: 'user-42',
              merchantTransactionType: 'DEBIT',
              merchantTransactionId: mtid,
            },
            transactionAmount: amount,
            currencyCode: 'CAD',
            transactionType: 'DEBIT',
          }),
        }).then(async (r) => ({
          status: r.statusCode,
          body: (await r.body.json()) as Record<string, unknown>,
        }));
      const low = await start(99, 'MT-LOW');
      const high = await start(100_000_001, 'MT-HIGH');
      const ok = await start(100, 'MT-OK');
      expect([low.body.transactionStatus, high.body.transactionStatus, ok.body.transactionStatus]).toEqual([
        'REJECTED',
        'REJECTED',
        'SUCCESS',
      ]);
      await live.drainNotifications();
      expect(
        received
          .map(
            (r) => (r.body as { transaction: { transactionStatus: string } }).transaction.transactionStatus,
          )
          .sort(),
      ).toEqual(['REJECTED', 'REJECTED', 'SUCCESS']);
      expect(received.every((r) => r.auth === 'Bearer notify-secret')).toBe(true);
      expect(live.deliveries.filter((d) => d.attempts === 2)).toHaveLength(1);
      const now = Date.now();
      const report = await clientFor(live.env()).report({
        queryType: 'TRANSACTION',
        start: new Date(now - 60_000).toISOString(),
        end: new Date(now + 60_000).toISOString(),
      });
      const rows = JSON.parse(await text(report.stream)) as {
        merchantTransactionId: string;
        transactionAmount: number;
        transactionStatus: string;
      }[];
      expect(rows.map((r) => [r.merchantTransactionId, r.transactionAmount, r.transactionStatus])).toEqual([
        ['MT-LOW', 99, 'REJECTED'],
        ['MT-HIGH', 100_000_001, 'REJECTED'],
        ['MT-OK', 100, 'SUCCESSFUL'],
      ]);
    } finally {
      await live.close();
      receiver.close();
    }
  });

  it('gives up on a receiver that never answers 2xx after the configured attempts', async () => {
    const receiver = createServer((_req, res) => res.writeHead(500).end());
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/n`;
    const live = await startSandbox({
      seed: 3,
      transactions: 40,
      from: '2026-10-01',
      to: '2026-10-02',
      notifyUrl: url,
      notifyAttempts: 3,
      notifyBackoffMs: 5,
    });
    try {
      const result = await live.notify({
        start: '2026-10-01T04:00:00.000Z',
        end: '2026-10-01T10:00:00.000Z',
      });
      expect(result.sent).toBeGreaterThan(0);
      expect(result.delivered).toBe(0);
      expect(live.deliveries.every((d) => d.attempts === 3 && !d.delivered && d.lastStatus === 500)).toBe(
        true,
      );
    } finally {
      await live.close();
      receiver.close();
    }
  });
});

describe('legacy query', () => {
  it('returns headerless CSV for types 1, 4, 5 and 6 with the selected fields', async () => {
    const client = clientFor();
    const day = { from: '2026-10-21', to: '2026-11-03' };
    const lines = async (q: Parameters<ProviderClient['legacyQuery']>[0]) =>
      (await text((await client.legacyQuery(q)).stream)).split('\n').filter(Boolean);
    const t5 = await lines({ queryType: '5', ...day });
    expect(t5.length).toBeGreaterThan(10);
    expect(t5.every((l) => l.split(',').length === 17)).toBe(true);
    const t6 = await lines({ queryType: '6', ...day, fields: [4, 1, 2, 19] });
    expect(t6.every((l) => /^T\w+,\d{8},[DC],(\d{8})?$/.test(l))).toBe(true);
    expect((await lines({ queryType: '1', ...day })).every((l) => l.split(',').length === 12)).toBe(true);
    expect((await lines({ queryType: '4', ...day })).every((l) => l.split(',').length === 9)).toBe(true);
  });

  it('wrong merchant_pass: ProviderAuthFailed naming the variables', async () => {
    const client = clientFor({ ...sandbox.env(), RECON_LEGACY_MERCHANT_PASS: 'wrongpass' });
    const error = await failure(client.legacyQuery({ queryType: '5', from: '2026-10-21', to: '2026-10-22' }));
    expect(error).toBeInstanceOf(ProviderAuthFailed);
    expect(error.message).toBe(
      'legacy query type 5 2026-10-21..2026-10-22: the provider refused the merchant credentials (HTTP 401): check RECON_LEGACY_MERCHANT_ID / RECON_LEGACY_MERCHANT_PASS for the staging environment',
    );
  });

  it('refuses a query that breaks a limit before sending anything', async () => {
    const client = clientFor();
    const before = sandbox.stats.requests['/legacy/query'] ?? 0;
    const error = await failure(client.legacyQuery({ queryType: '5', from: '2026-09-01', to: '2026-10-15' }));
    expect(error).toBeInstanceOf(LegacyQueryRefused);
    expect(error.message).toBe(
      'legacy query refused before sending: query_sdate..query_edate spans 45 days; the limit is 40',
    );
    expect(sandbox.stats.requests['/legacy/query'] ?? 0).toBe(before);
  });
});

describe('configuration', () => {
  it('refuses plain HTTP to a non-loopback host, disabled certificate checks, and production on a loopback URL', () => {
    const env = sandbox.env();
    expect(() =>
      createProviderClient(loadConfig({ ...env, RECON_BASE_URL: 'http://provider.example.com/api' }), {
        env: {},
      }),
    ).toThrow(
      new ConfigError(
        'RECON_BASE_URL=http://provider.example.com is refused: the provider is reached over HTTPS only (plain HTTP is allowed for 127.0.0.0/8, ::1 and localhost, where the sandbox runs)',
      ),
    );
    expect(() =>
      createProviderClient(loadConfig(env), { env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } }),
    ).toThrow(ConfigError);
    expect(() =>
      createProviderClient(loadConfig({ ...env, RECON_ENVIRONMENT: 'production' }), { env: {} }),
    ).toThrow(
      /RECON_ENVIRONMENT=production but RECON_BASE_URL, RECON_AUTH_URL, RECON_QUERY_URL point\(s\) at a loopback address/,
    );
    expect(() =>
      createProviderClient(loadConfig({ ...env, RECON_AUTH_URL: 'https://user:pw@auth.example.com' }), {
        env: {},
      }),
    ).toThrow('RECON_AUTH_URL must not carry credentials in the URL: use the RECON_* secrets');
    expect(() =>
      createProviderClient(loadConfig({ ...env, RECON_QUERY_URL: 'https://[::1]:8443/q' }), { env: {} }),
    ).not.toThrow();
  });

  it('a missing setting is a ConfigError naming it', async () => {
    const { RECON_CLIENT_SECRET: _drop, ...env } = sandbox.env();
    const error = await failure(clientFor(env).report({ queryType: 'TRANSACTION', ...WINDOW }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'the provider token request needs RECON_CLIENT_SECRET: set them in the environment or in .env',
    );
  });
});
