import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/server.ts';
import { recon } from '../support/recon-process.ts';

// `recon accounts` never opens the database: a URL nothing listens on proves it.
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';

let ca: Sandbox;
let us: Sandbox;
let dir: string;
let file: string;
let env: Record<string, string>;
const WRONG_SECRET = 'wrong-client-secret-7731';

beforeAll(async () => {
  [ca, us] = await Promise.all([
    startSandbox({ seed: 'accounts-ca', transactions: 50, from: '2026-10-01', to: '2026-10-03' }),
    startSandbox({ seed: 'accounts-us', transactions: 50, from: '2026-10-01', to: '2026-10-03' }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'recon-accounts-cli-'));
  writeFileSync(join(dir, 'us-legacy'), `${us.legacyMerchantPass}\n`);
  file = join(dir, 'accounts.yaml');
  writeFileSync(
    file,
    [
      'accounts:',
      '  - name: ca-main',
      '    currency: CAD',
      `    baseUrl: ${ca.baseUrl}`,
      `    authUrl: ${ca.authUrl}`,
      `    queryUrl: ${ca.queryUrl}`,
      `    clientId: ${ca.clientId}`,
      '    clientSecret: { env: CA_SECRET }',
      `    legacyMerchantId: ${ca.legacyMerchantId}`,
      '    legacyMerchantPass: { env: CA_LEGACY }',
      '  - name: us-main',
      '    currency: USD',
      `    baseUrl: ${us.baseUrl}`,
      `    authUrl: ${us.authUrl}`,
      `    queryUrl: ${us.queryUrl}`,
      `    clientId: ${us.clientId}`,
      '    clientSecret: { env: US_SECRET }',
      `    legacyMerchantId: EXF00009`,
      '    legacyMerchantPass: { file: us-legacy }',
      '',
    ].join('\n'),
  );
  env = {
    RECON_ACCOUNTS_FILE: file,
    CA_SECRET: ca.clientSecret,
    CA_LEGACY: ca.legacyMerchantPass,
    US_SECRET: us.clientSecret,
  };
});

afterAll(async () => {
  await Promise.all([ca?.close(), us?.close()]);
});

function secrets(): string[] {
  return [
    ca.clientSecret,
    ca.legacyMerchantPass,
    us.clientSecret,
    us.legacyMerchantPass,
    WRONG_SECRET,
    ...ca.issuedTokens(),
    ...us.issuedTokens(),
  ];
}

function expectNoSecret(text: string): void {
  for (const s of secrets()) expect(text).not.toContain(s);
}

describe('recon accounts', () => {
  it('list shows each account and where its secrets come from, never a secret', async () => {
    const text = await recon(NO_DATABASE, ['accounts', 'list'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`accounts from ${file}`);
    expect(text.stdout).toContain('ca-main (staging, CAD)');
    expect(text.stdout).toContain(`merchant id EXF00009`);
    expect(text.stdout).toContain('clientSecret set (env US_SECRET)');
    expect(text.stdout).toContain(`legacyMerchantPass set (file ${join(dir, 'us-legacy')})`);
    expect(text.stdout).toContain('notificationSecret not set');
    expectNoSecret(text.stdout + text.stderr);

    const json = await recon(NO_DATABASE, ['accounts', 'list', '--json'], env);
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as { name: string; baseUrl: string; secrets: unknown }[];
    expect(listed.map((a) => a.name)).toEqual(['ca-main', 'us-main']);
    expect(listed[0]).toMatchObject({
      environment: 'staging',
      currency: 'CAD',
      baseUrl: ca.baseUrl,
      clientId: ca.clientId,
      legacyMerchantId: ca.legacyMerchantId,
      secrets: {
        clientSecret: 'env CA_SECRET',
        legacyMerchantPass: 'env CA_LEGACY',
        notificationSecret: null,
      },
    });
    expectNoSecret(json.stdout + json.stderr);
  });

  it('without RECON_ACCOUNTS_FILE, lists the account default of the RECON_* variables', async () => {
    const r = await recon(NO_DATABASE, ['accounts', 'list', '--json'], ca.env());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      expect.objectContaining({
        name: 'default',
        baseUrl: ca.baseUrl,
        legacyMerchantId: ca.legacyMerchantId,
      }),
    ]);
    expectNoSecret(r.stdout + r.stderr);
  });

  it('check says ok for an account whose credentials work, and names the failing step of another', async () => {
    const r = await recon(NO_DATABASE, ['accounts', 'check'], env);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('ca-main: ok (token, report API, legacy query)');
    // us-main's merchant id is not the one its provider knows.
    expect(lines[1]).toMatch(
      /^us-main: FAILED: legacy query: legacy query type 1 \S+: the provider refused the merchant credentials \(HTTP 401\): check account us-main legacyMerchantId \/ account us-main legacyMerchantPass/,
    );
    expect(r.code).toBe(1);
  });

  it('check names the account and the step that fails, exit 1, and --account checks one', async () => {
    const bad = { ...env, US_SECRET: WRONG_SECRET };
    const r = await recon(NO_DATABASE, ['accounts', 'check'], bad);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('ca-main: ok (token, report API, legacy query)');
    expect(lines[1]).toMatch(
      /^us-main: FAILED: token and report API: the token endpoint refused the client credentials \(HTTP 401\): check account us-main clientId \/ account us-main clientSecret/,
    );
    expect(lines).toHaveLength(2);
    expectNoSecret(r.stdout + r.stderr);

    const one = await recon(NO_DATABASE, ['accounts', 'check', '--account', 'ca-main'], bad);
    expect(one).toMatchObject({ code: 0, stdout: 'ca-main: ok (token, report API, legacy query)\n' });

    const unknown = await recon(NO_DATABASE, ['accounts', 'check', '--account', 'eu-main'], bad);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no account named "eu-main": the accounts are ca-main, us-main');
  });

  it('a bad accounts file is one line naming the field, exit 2', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ accounts: [{ name: 'x', clientSecret: WRONG_SECRET }] }));
    const r = await recon(NO_DATABASE, ['accounts', 'list'], { RECON_ACCOUNTS_FILE: broken });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('accounts[0].clientSecret: a secret is never written in the accounts file');
    expectNoSecret(r.stderr);
  });
});
