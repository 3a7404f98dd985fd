import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { accountsOf, loadAccounts, selectAccounts } from '../../config/accounts.ts';
import { ConfigError, UsageError } from '../../domain/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'recon-accounts-'));
let n = 0;
function file(content: string, ext = 'json'): string {
  const path = join(dir, `accounts-${n++}.${ext}`);
  writeFileSync(path, content);
  return path;
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const SECRET = 'hunter2-ca-main-secret';
const LEGACY_PASS = 'pass-of-us-main-0042';

describe('loadAccounts', () => {
  it('without RECON_ACCOUNTS_FILE, the single-account variables form the account "default"', () => {
    const accounts = loadAccounts({
      RECON_ENVIRONMENT: 'production',
      RECON_BASE_URL: 'https://provider.example/api',
      RECON_CLIENT_ID: 'client-1',
      RECON_CLIENT_SECRET: SECRET,
      RECON_LEGACY_MERCHANT_ID: 'MRC00001',
      RECON_LEGACY_MERCHANT_PASS: LEGACY_PASS,
    });
    expect(accounts.origin).toBe('environment');
    expect(accounts.list.map((a) => a.name)).toEqual(['default']);
    const a = accounts.byName('default')!;
    expect(a).toMatchObject({
      environment: 'production',
      baseUrl: 'https://provider.example/api',
      clientId: 'client-1',
      legacyMerchantId: 'MRC00001',
      secretSources: {
        clientSecret: 'env RECON_CLIENT_SECRET',
        legacyMerchantPass: 'env RECON_LEGACY_MERCHANT_PASS',
      },
    });
    expect(a.clientSecret).toBe(SECRET);
    expect(a.legacyMerchantPass).toBe(LEGACY_PASS);
    expect(a.notificationSecret).toBeUndefined();
    expect(accounts.byMerchantId('MRC00001')).toBe(a);
  });

  it('reads a JSON file, resolving secrets from variables and files (one trailing newline trimmed)', () => {
    const passFile = join(dir, 'us-main-legacy');
    writeFileSync(passFile, `${LEGACY_PASS}\n`);
    const path = file(
      JSON.stringify({
        accounts: [
          {
            name: 'ca-main',
            environment: 'production',
            baseUrl: 'https://ca.example/api/',
            clientId: 'ca-client',
            clientSecret: { env: 'CA_MAIN_CLIENT_SECRET' },
            legacyMerchantId: 'MRC00001',
            currency: 'CAD',
          },
          {
            name: 'us-main',
            legacyMerchantId: 'MRC00002',
            legacyMerchantPass: { file: passFile },
            notificationSecret: { file: 'us-notify' },
            currency: 'USD',
          },
        ],
      }),
    );
    writeFileSync(join(dir, 'us-notify'), 'notify-secret\r\n');
    const accounts = loadAccounts({
      RECON_ACCOUNTS_FILE: path,
      RECON_ENVIRONMENT: 'production',
      CA_MAIN_CLIENT_SECRET: SECRET,
    });
    expect(accounts.origin).toBe(path);
    expect(accounts.list.map((a) => [a.name, a.environment, a.currency])).toEqual([
      ['ca-main', 'production', 'CAD'],
      ['us-main', 'production', 'USD'],
    ]);
    const ca = accounts.byName('ca-main')!;
    expect(ca.baseUrl).toBe('https://ca.example/api');
    expect(ca.clientSecret).toBe(SECRET);
    expect(ca.secretSources).toEqual({ clientSecret: 'env CA_MAIN_CLIENT_SECRET' });
    const us = accounts.byMerchantId('MRC00002')!;
    expect(us.name).toBe('us-main');
    expect(us.legacyMerchantPass).toBe(LEGACY_PASS);
    expect(us.notificationSecret).toBe('notify-secret');
    expect(us.secretSources?.legacyMerchantPass).toBe(`file ${passFile}`);
    expect(accounts.byName('nope')).toBeUndefined();
    expect(accounts.byMerchantId('MRC99999')).toBeUndefined();
  });

  it('reads YAML', () => {
    const path = file(
      [
        'accounts:',
        '  - name: ca-main',
        '    clientId: a',
        '    clientSecret: { env: S1 }',
        '  - name: us-2',
        '',
      ].join('\n'),
      'yaml',
    );
    const accounts = loadAccounts({ RECON_ACCOUNTS_FILE: path, S1: SECRET });
    expect(accounts.list.map((a) => a.name)).toEqual(['ca-main', 'us-2']);
    expect(accounts.list[0]!.environment).toBe('staging');
    expect(accounts.list[0]!.clientSecret).toBe(SECRET);
  });

  it('never lets a secret out through serialisation, inspection, spread or errors', () => {
    const path = file(JSON.stringify({ accounts: [{ name: 'a', clientSecret: { env: 'S' } }] }));
    const [a] = loadAccounts({ RECON_ACCOUNTS_FILE: path, S: SECRET }).list;
    expect(a!.clientSecret).toBe(SECRET);
    expect(JSON.stringify(a)).not.toContain(SECRET);
    expect(inspect(a, { depth: 5 })).not.toContain(SECRET);
    expect(JSON.stringify({ ...a })).not.toContain(SECRET);
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('names every bad field with its path, in one error', () => {
    const path = file(
      JSON.stringify({
        accounts: [
          { name: 'ok', clientSecret: { env: 'UNSET_VARIABLE' } },
          {
            name: 'Bad Name',
            environment: 'prod',
            baseUrl: 'ftp://x',
            clientSecret: SECRET,
            legacyMerchantPass: { env: 'A', file: '/x' },
            currency: 'cad',
            colour: 'blue',
          },
        ],
        extra: 1,
      }),
    );
    const error = errorOf(() => loadAccounts({ RECON_ACCOUNTS_FILE: path }));
    const m = error.message;
    expect(m).toContain(path);
    expect(m).toContain('extra: unknown field');
    expect(m).toContain('accounts[1].name: "Bad Name" is not a name');
    expect(m).toContain('accounts[1].environment: "prod" is not valid');
    expect(m).toContain('accounts[1].baseUrl: must be an http(s) address');
    expect(m).toMatch(
      /accounts\[1\]\.clientSecret: a secret is never written in the accounts file: use \{ "env"/,
    );
    expect(m).toContain('accounts[1].legacyMerchantPass: must have exactly one of "env" or "file"');
    expect(m).toContain('accounts[1].currency: "cad" is not an ISO 4217 code');
    expect(m).toContain('accounts[1].colour: unknown field');
    expect(m).not.toContain(SECRET);
    expect(m.split('\n')).toHaveLength(1);
  });

  it('refuses duplicate names and merchant ids, unset variables, missing files and mixed environments', () => {
    const dup = file(
      JSON.stringify({
        accounts: [
          { name: 'a', legacyMerchantId: 'M1' },
          { name: 'a', legacyMerchantId: 'M1' },
        ],
      }),
    );
    const m1 = errorOf(() => loadAccounts({ RECON_ACCOUNTS_FILE: dup })).message;
    expect(m1).toContain('accounts[1].name: "a" is already the name of accounts[0]');
    expect(m1).toContain('accounts[1].legacyMerchantId: "M1" is already the merchant id of accounts[0]');

    const refs = file(
      JSON.stringify({
        accounts: [
          { name: 'a', clientSecret: { env: 'NOT_SET_HERE' } },
          { name: 'b', legacyMerchantPass: { file: join(dir, 'missing-secret') } },
          { name: 'c', environment: 'production' },
        ],
      }),
    );
    const m2 = errorOf(() => loadAccounts({ RECON_ACCOUNTS_FILE: refs })).message;
    expect(m2).toContain('accounts[0].clientSecret: environment variable NOT_SET_HERE is not set');
    expect(m2).toContain(
      `accounts[1].legacyMerchantPass: cannot read secret file ${join(dir, 'missing-secret')} (ENOENT)`,
    );
    expect(m2).toContain('accounts mix the staging and production environments');
  });

  it('refuses an empty list, a missing file and broken syntax without quoting the text', () => {
    expect(errorOf(() => loadAccounts({ RECON_ACCOUNTS_FILE: file('{"accounts": []}') })).message).toContain(
      'accounts: must be a list of at least one account',
    );
    expect(errorOf(() => loadAccounts({ RECON_ACCOUNTS_FILE: join(dir, 'none.json') })).message).toContain(
      'cannot be read (ENOENT)',
    );
    const broken = errorOf(() =>
      loadAccounts({ RECON_ACCOUNTS_FILE: file(`{"accounts": [{"name": "a", "clientSecret": "${SECRET}"`) }),
    ).message;
    expect(broken).toContain('is not valid JSON');
    expect(broken).not.toContain(SECRET);
  });
});

describe('selectAccounts', () => {
  const accounts = loadAccounts({
    RECON_ACCOUNTS_FILE: file(JSON.stringify({ accounts: [{ name: 'a' }, { name: 'b' }] })),
  });
  it('returns every account, or the one named, or a usage error listing the names', () => {
    expect(selectAccounts(accounts, undefined).map((a) => a.name)).toEqual(['a', 'b']);
    expect(selectAccounts(accounts, 'b').map((a) => a.name)).toEqual(['b']);
    expect(() => selectAccounts(accounts, 'c')).toThrow(UsageError);
    expect(() => selectAccounts(accounts, 'c')).toThrow('no account named "c": the accounts are a, b');
  });
});

describe('accountsOf', () => {
  it('builds the lookups of a list made in code', () => {
    const accounts = accountsOf([
      { name: 'ca-main', environment: 'staging', legacyMerchantId: 'MRC-CA' },
      { name: 'eu-main', environment: 'staging' },
    ]);
    expect(accounts.byMerchantId('MRC-CA')?.name).toBe('ca-main');
    expect(accounts.byName('eu-main')?.legacyMerchantId).toBeUndefined();
    expect(accounts.origin).toBe('code');
  });
});
