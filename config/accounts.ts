/**
 * The provider accounts this warehouse covers (docs/connecting-a-provider.md, "Several accounts").
 *
 * With RECON_ACCOUNTS_FILE, the accounts of that file, their secrets resolved from the environment
 * variables or files it points at. Without it, the single-account variables (RECON_CLIENT_ID, …) form
 * the account `default`.
 *
 * Secrets are own, non-enumerable properties of each frozen account: code reads them by name
 * (`account.clientSecret`), while JSON.stringify, util.inspect, object spread and structured logging
 * never copy them, so an account passed by mistake to a log line, an error or a workflow payload
 * carries no secret.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, UsageError } from '../domain/errors.ts';
import { loadConfig, type Config, type Environment } from './config.ts';
import {
  parseAccountsText,
  SECRET_FIELDS,
  validateAccountsFile,
  type AccountEntry,
  type SecretField,
} from './accounts-file.ts';
import { describeSecretRef, resolveSecretRef } from './secret-ref.ts';

export { SECRET_FIELDS, type SecretField } from './accounts-file.ts';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';

export interface Account {
  readonly name: string;
  readonly environment: Environment;
  readonly baseUrl?: string;
  readonly authUrl?: string;
  readonly queryUrl?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly legacyMerchantId?: string;
  readonly legacyMerchantPass?: string;
  readonly notificationSecret?: string;
  /** Settlement currency, when the account has one (ISO 4217). */
  readonly currency?: string;
  /**
   * Where each secret that is set comes from (`env NAME`, `file PATH`), for `recon accounts list`;
   * never the secret itself. Absent on accounts built in code ({@link accountsOf}).
   */
  readonly secretSources?: Readonly<Partial<Record<SecretField, string>>>;
}

export interface Accounts {
  readonly list: readonly Account[];
  byName(name: string): Account | undefined;
  byMerchantId(merchantId: string): Account | undefined;
  /** Where the list came from: the accounts file's path, or `environment` for the account `default`. */
  readonly origin: string;
}

type AccountFields = Omit<Account, SecretField | 'secretSources'>;

function freezeAccount(
  fields: AccountFields,
  secrets: Partial<Record<SecretField, string>>,
  sources: Partial<Record<SecretField, string>>,
): Account {
  const account: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) account[key] = value;
  account.secretSources = Object.freeze({ ...sources });
  for (const field of SECRET_FIELDS) {
    if (secrets[field] === undefined) continue;
    Object.defineProperty(account, field, { value: secrets[field], enumerable: false });
  }
  return Object.freeze(account) as unknown as Account;
}

/**
 * The accounts of a list built in code (tests, tools); `origin` says where they come from
 * (`environment`: the RECON_* variables, whose names the provider client's messages then use).
 */
export function accountsOf(list: readonly Account[], origin = 'code'): Accounts {
  const byName = new Map(list.map((a) => [a.name, a]));
  const byMerchant = new Map(
    list.filter((a) => a.legacyMerchantId !== undefined).map((a) => [a.legacyMerchantId!, a]),
  );
  return Object.freeze({
    list: Object.freeze([...list]),
    origin,
    byName: (name: string) => byName.get(name),
    byMerchantId: (id: string) => byMerchant.get(id),
  });
}

function defaultAccount(config: Config): Account {
  const p = config.provider;
  const secrets = {
    clientSecret: p.clientSecret,
    legacyMerchantPass: p.legacyMerchantPass,
    notificationSecret: config.notificationSecret,
  };
  const variables: Record<SecretField, string> = {
    clientSecret: 'RECON_CLIENT_SECRET',
    legacyMerchantPass: 'RECON_LEGACY_MERCHANT_PASS',
    notificationSecret: 'RECON_NOTIFICATION_SECRET',
  };
  const sources: Partial<Record<SecretField, string>> = {};
  for (const field of SECRET_FIELDS)
    if (secrets[field] !== undefined) sources[field] = `env ${variables[field]}`;
  return freezeAccount(
    {
      name: DEFAULT_ACCOUNT,
      environment: config.environment,
      baseUrl: p.baseUrl,
      authUrl: p.authUrl,
      queryUrl: p.queryUrl,
      clientId: p.clientId,
      legacyMerchantId: p.legacyMerchantId,
    },
    secrets,
    sources,
  );
}

function resolveEntry(
  e: AccountEntry,
  i: number,
  environment: Environment,
  env: NodeJS.ProcessEnv,
  baseDir: string,
  problems: string[],
): Account {
  const secrets: Partial<Record<SecretField, string>> = {};
  const sources: Partial<Record<SecretField, string>> = {};
  for (const field of SECRET_FIELDS) {
    const ref = e.secrets[field];
    if (!ref) continue;
    const resolved = resolveSecretRef(ref, env, baseDir);
    if ('problem' in resolved) problems.push(`accounts[${i}].${field}: ${resolved.problem}`);
    else {
      secrets[field] = resolved.value;
      sources[field] = describeSecretRef(ref, baseDir);
    }
  }
  const { secrets: _refs, environment: own, ...fields } = e;
  return freezeAccount({ ...fields, environment: own ?? environment }, secrets, sources);
}

/**
 * Reads the accounts: RECON_ACCOUNTS_FILE when set, else the account `default` from the
 * single-account variables. Throws one {@link ConfigError} listing every problem, each with the path
 * of its field (`accounts[1].clientSecret: …`); no message ever contains a secret.
 */
export function loadAccounts(env: NodeJS.ProcessEnv = process.env): Accounts {
  const file = env.RECON_ACCOUNTS_FILE?.trim();
  if (!file) return singleAccount(loadConfig(env));
  const path = resolve(file);
  const fail = (problems: string[]): never => {
    throw new ConfigError(
      `RECON_ACCOUNTS_FILE ${path}: ${problems.length > 1 ? `${problems.length} problems: ` : ''}${problems.join('; ')}`,
    );
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    return fail([`cannot be read (${code}): fix the path or unset RECON_ACCOUNTS_FILE`]);
  }
  const parsed = parseAccountsText(text, path);
  if ('problem' in parsed) return fail([parsed.problem]);
  const { entries, problems } = validateAccountsFile(parsed.value);
  if (problems.length > 0) return fail(problems);
  const environment = loadConfig(env).environment;
  const list = entries.map((e, i) => resolveEntry(e, i, environment, env, dirname(path), problems));
  const environments = [...new Set(list.map((a) => a.environment))];
  if (environments.length > 1) {
    problems.push(
      `accounts mix the ${environments.join(' and ')} environments: a warehouse holds one environment's data; use one accounts file per warehouse`,
    );
  }
  if (problems.length > 0) return fail(problems);
  return accountsOf(list, path);
}

/** The one account `default` of a config's single-account settings (RECON_BASE_URL, …). */
export function singleAccount(config: Config): Accounts {
  return accountsOf([defaultAccount(config)], 'environment');
}

/**
 * The refusal of an account name no command knows, the same from every command (exit 2): one line
 * naming the accounts it does know (for a command that reads the warehouse, also those the warehouse
 * holds data for).
 */
export function unknownAccount(name: string, known: readonly string[]): UsageError {
  return new UsageError(
    `no account named ${JSON.stringify(name)}: the accounts are ${[...new Set(known)].sort().join(', ')} (recon accounts list)`,
  );
}

/** The accounts a command covers: the one named by `--account`, or all of them. */
export function selectAccounts(accounts: Accounts, name: string | undefined): readonly Account[] {
  if (name === undefined) return accounts.list;
  const account = accounts.byName(name);
  if (!account)
    throw unknownAccount(
      name,
      accounts.list.map((a) => a.name),
    );
  return [account];
}

/**
 * The application config as one account sees it: the account's environment, provider settings and
 * notification secret in place of the single-account variables. Code that takes a {@link Config}
 * (the provider client, the pull) serves that account with it.
 */
export function configForAccount(config: Config, account: Account): Config {
  return Object.freeze({
    ...config,
    environment: account.environment,
    provider: Object.freeze({
      baseUrl: account.baseUrl,
      authUrl: account.authUrl,
      queryUrl: account.queryUrl,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
      legacyMerchantId: account.legacyMerchantId,
      legacyMerchantPass: account.legacyMerchantPass,
    }),
    notificationSecret: account.notificationSecret,
  });
}
