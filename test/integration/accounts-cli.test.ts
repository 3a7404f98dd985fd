import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import {
  type AccountsSandbox,
  secretVariable,
  startAccountsSandbox,
} from '../../sandbox/accounts-sandbox.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon } from '../support/recon-process.ts';

/**
 * `recon accounts list / check` and `recon pull --account` as processes against the sandbox with
 * several accounts. Everything they print, and every table afterwards, is searched for every
 * account's secrets, the wrong ones tried and every token issued.
 */

// `recon accounts` never opens the database: a URL nothing listens on proves it.
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';
const WRONG_SECRET = 'wrong-client-secret-7731';
const WRONG_PASS = 'wrongpass-3c9d';

let sandbox: AccountsSandbox;
let h: DatabaseHandle;
let dir: string;
let file: string;
let env: Record<string, string>;
const printed: string[] = [];

beforeAll(async () => {
  [sandbox, h] = await Promise.all([
    startAccountsSandbox({
      accounts: [
        {
          name: 'ca-main',
          seed: 'cli-ca',
          sandbox: { transactions: 300, from: '2026-10-01', to: '2026-10-05' },
        },
        {
          name: 'us-main',
          seed: 'cli-us',
          sandbox: { transactions: 100, from: '2026-10-01', to: '2026-10-05' },
        },
      ],
    }),
    createTestDatabase(),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'recon-accounts-cli-'));
  const accounts = sandbox.accountsFile();
  // us-main's legacy password comes from a file, the container-secret way (one trailing newline).
  writeFileSync(join(dir, 'us-legacy'), `${sandbox.account('us-main').legacyMerchantPass}\n`);
  const parsed = JSON.parse(accounts.json) as { accounts: Record<string, unknown>[] };
  parsed.accounts[0]!.currency = 'CAD';
  parsed.accounts[1]!.currency = 'USD';
  parsed.accounts[1]!.legacyMerchantPass = { file: 'us-legacy' };
  file = join(dir, 'accounts.json');
  writeFileSync(file, JSON.stringify(parsed));
  env = { ...accounts.env, RECON_ACCOUNTS_FILE: file };
});

afterAll(async () => {
  await sandbox?.close();
  await h?.close();
});

async function run(args: string[], extra: Record<string, string> = {}, database = NO_DATABASE) {
  const r = await recon(database, args, { ...env, ...extra });
  printed.push(r.stdout, r.stderr);
  return r;
}

describe('recon accounts', () => {
  it('list shows each account and where its secrets come from, never a secret', async () => {
    const text = await run(['accounts', 'list']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`accounts from ${file}`);
    expect(text.stdout).toContain('ca-main (staging, CAD)');
    expect(text.stdout).toContain(`merchant id ${sandbox.account('us-main').legacyMerchantId}`);
    expect(text.stdout).toContain(`clientSecret set (env ${secretVariable('us-main', 'CLIENT_SECRET')})`);
    expect(text.stdout).toContain(`legacyMerchantPass set (file ${join(dir, 'us-legacy')})`);
    expect(text.stdout).toContain('notificationSecret not set');

    const json = await run(['accounts', 'list', '--json']);
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as { name: string }[];
    expect(listed.map((a) => a.name)).toEqual(['ca-main', 'us-main']);
    const ca = sandbox.account('ca-main');
    expect(listed[0]).toEqual({
      name: 'ca-main',
      environment: 'staging',
      currency: 'CAD',
      baseUrl: sandbox.baseUrl,
      authUrl: sandbox.authUrl,
      queryUrl: sandbox.queryUrl,
      clientId: ca.clientId,
      legacyMerchantId: ca.legacyMerchantId,
      secrets: {
        clientSecret: `env ${secretVariable('ca-main', 'CLIENT_SECRET')}`,
        legacyMerchantPass: `env ${secretVariable('ca-main', 'LEGACY_PASS')}`,
        notificationSecret: null,
      },
      configured: true,
      // This test's DATABASE_URL answers nowhere: the warehouse was not read (said on stderr).
      inWarehouse: null,
    });
    expect(json.stderr).toMatch(/^recon: the warehouse was not read, only the configuration is listed: /);
  });

  it('without RECON_ACCOUNTS_FILE, lists the account default of the RECON_* variables', async () => {
    const ca = sandbox.account('ca-main');
    const r = await recon(NO_DATABASE, ['accounts', 'list', '--json'], {
      RECON_BASE_URL: sandbox.baseUrl,
      RECON_CLIENT_ID: ca.clientId,
      RECON_CLIENT_SECRET: ca.clientSecret,
      RECON_LEGACY_MERCHANT_ID: ca.legacyMerchantId,
    });
    printed.push(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      expect.objectContaining({
        name: 'default',
        baseUrl: sandbox.baseUrl,
        legacyMerchantId: ca.legacyMerchantId,
        secrets: {
          clientSecret: 'env RECON_CLIENT_SECRET',
          legacyMerchantPass: null,
          notificationSecret: null,
        },
      }),
    ]);
  });

  it('check says ok for each account whose credentials work, one line each', async () => {
    const r = await run(['accounts', 'check']);
    expect(r).toMatchObject({
      code: 0,
      stderr: '',
      stdout:
        'ca-main: ok (token, report API, legacy query)\nus-main: ok (token, report API, legacy query)\n',
    });
  });

  it('check names the account and the step that fails, exit 1, and --account checks one', async () => {
    const bad = { [secretVariable('us-main', 'CLIENT_SECRET')]: WRONG_SECRET };
    const r = await run(['accounts', 'check'], bad);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('ca-main: ok (token, report API, legacy query)');
    expect(lines[1]).toMatch(
      /^us-main: FAILED: token and report API: the token endpoint refused the client credentials \(HTTP 401\): check account us-main clientId \/ account us-main clientSecret/,
    );
    expect(lines).toHaveLength(2);

    const pass = await run(['accounts', 'check', '--account', 'ca-main'], {
      [secretVariable('ca-main', 'LEGACY_PASS')]: WRONG_PASS,
    });
    expect(pass.code).toBe(1);
    expect(pass.stdout).toMatch(
      /^ca-main: FAILED: legacy query: legacy query type 1 \S+: the provider refused the merchant credentials \(HTTP 401\): check account ca-main legacyMerchantId \/ account ca-main legacyMerchantPass/,
    );

    const one = await run(['accounts', 'check', '--account', 'ca-main'], bad);
    expect(one).toMatchObject({ code: 0, stdout: 'ca-main: ok (token, report API, legacy query)\n' });

    const unknown = await run(['accounts', 'check', '--account', 'eu-main'], bad);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no account named "eu-main": the accounts are ca-main, us-main');
  });

  it('a bad accounts file is one line naming the field, exit 2', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ accounts: [{ name: 'x', clientSecret: WRONG_SECRET }] }));
    const r = await run(['accounts', 'list'], { RECON_ACCOUNTS_FILE: broken });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('accounts[0].clientSecret: a secret is never written in the accounts file');
  });
});

describe('recon pull --account', () => {
  const window = ['--from', '2026-10-02', '--to', '2026-10-03'];

  it("pulls one account's data with its credentials, or every account in turn", async () => {
    const one = await run(
      ['pull', '--source', 'report-transactions', ...window, '--account', 'us-main'],
      {},
      h.connectionString,
    );
    expect(one.code).toBe(0);
    const summary = JSON.parse(one.stdout) as { rowsLoaded: number; status: string };
    expect(summary.status).toBe('committed');
    const range = { start: '2026-10-02T04:00:00.000Z', end: '2026-10-04T04:00:00.000Z' };
    const usReport = [...sandbox.account('us-main').history.facts(range)].filter(
      (f) => f.channel !== 'legacy',
    );
    expect(summary.rowsLoaded).toBe(usReport.length);

    const all = await run(['pull', '--source', 'legacy-transactions', ...window], {}, h.connectionString);
    expect(all.code).toBe(0);
    const summaries = JSON.parse(all.stdout) as { account: string; status: string }[];
    expect(summaries.map((s) => [s.account, s.status])).toEqual([
      ['ca-main', 'committed'],
      ['us-main', 'committed'],
    ]);

    const wrong = await run(
      ['pull', '--source', 'legacy-returns', ...window, '--account', 'ca-main'],
      { [secretVariable('ca-main', 'LEGACY_PASS')]: WRONG_PASS },
      h.connectionString,
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /check account ca-main legacyMerchantId \/ account ca-main legacyMerchantPass/,
    );

    // Every account: one account's wrong password does not stop the other; exit 1 names it.
    const partly = await run(
      ['pull', '--source', 'legacy-returns', ...window],
      { [secretVariable('ca-main', 'LEGACY_PASS')]: WRONG_PASS },
      h.connectionString,
    );
    expect(partly.code).toBe(1);
    expect(partly.stderr).toMatch(
      /^recon: account ca-main: legacy query type 1 \S+: the provider refused the merchant credentials/,
    );
    expect((JSON.parse(partly.stdout) as { account: string }[]).map((s) => s.account)).toEqual(['us-main']);
  });

  it('never prints or stores a secret of any account', async () => {
    const secrets = [...sandbox.secrets(), WRONG_SECRET, WRONG_PASS, ...sandbox.issuedTokens()];
    expect(sandbox.issuedTokens().length).toBeGreaterThanOrEqual(4);
    const output = printed.join('\n');
    expect(output.length).toBeGreaterThan(1000);
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(
      h.db,
    );
    let stored = '';
    for (const { table_name } of tables.rows) {
      const dump = await sql<{
        text: string | null;
      }>`select string_agg(t::text, E'\n') as text from ${sql.table(table_name)} t`.execute(h.db);
      stored += dump.rows[0]?.text ?? '';
    }
    expect(stored.length).toBeGreaterThan(5_000);
    for (const secret of secrets) {
      expect(output.includes(secret), 'a secret was printed').toBe(false);
      expect(stored.includes(secret), 'a secret was stored').toBe(false);
    }
  });
});
