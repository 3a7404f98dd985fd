import { readFileSync } from 'node:fs';
import { ConfigError } from '../domain/errors.ts';
import type { Environment } from './config.ts';

/**
 * The provider accounts of this warehouse (PRODUCT.md, Several provider accounts). This is the part
 * the data side reads: names, environments, legacy merchant ids (to file ledger entries and
 * notifications under their account), notification secrets and currencies. The accounts file's
 * credentials belong to the provider clients.
 */
export interface Account {
  readonly name: string;
  readonly environment: Environment;
  readonly legacyMerchantId?: string;
  /** The resolved secret the provider sends with this account's notifications, if it has its own. */
  readonly notificationSecret?: string;
  readonly currency?: string;
}

export interface Accounts {
  readonly list: readonly Account[];
  byName(name: string): Account | undefined;
  byMerchantId(id: string): Account | undefined;
}

export const ACCOUNT_NAME = /^[a-z0-9-]{1,32}$/;

export function accountsOf(list: readonly Account[]): Accounts {
  const names = new Map(list.map((a) => [a.name, a]));
  const merchants = new Map(
    list.filter((a) => a.legacyMerchantId !== undefined).map((a) => [a.legacyMerchantId!, a]),
  );
  return {
    list,
    byName: (name) => names.get(name),
    byMerchantId: (id) => merchants.get(id),
  };
}

type SecretRef = { env: string } | { file: string };

function secret(ref: unknown, where: string, env: NodeJS.ProcessEnv): string | undefined {
  if (ref === undefined || ref === null) return undefined;
  const r = ref as Partial<Record<'env' | 'file', unknown>>;
  if (typeof ref === 'object' && typeof r.env === 'string') {
    const value = env[r.env];
    if (!value) throw new ConfigError(`${where}: environment variable ${r.env} is not set`);
    return value;
  }
  if (typeof ref === 'object' && typeof r.file === 'string') {
    try {
      return readFileSync(r.file, 'utf8').trim();
    } catch {
      throw new ConfigError(`${where}: cannot read the secret file ${r.file}`);
    }
  }
  throw new ConfigError(`${where}: a secret is { "env": VAR } or { "file": PATH }, never inline`);
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/**
 * The accounts of RECON_ACCOUNTS_FILE (JSON), or, without it, the single-account variables as the
 * account `default`.
 */
export function loadAccounts(env: NodeJS.ProcessEnv = process.env): Accounts {
  const environment = (text(env.RECON_ENVIRONMENT) ?? 'staging') as Environment;
  const file = text(env.RECON_ACCOUNTS_FILE);
  if (!file) {
    return accountsOf([
      {
        name: 'default',
        environment,
        legacyMerchantId: text(env.RECON_LEGACY_MERCHANT_ID),
        notificationSecret: text(env.RECON_NOTIFICATION_SECRET),
      },
    ]);
  }
  let parsed: { accounts?: unknown };
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as { accounts?: unknown };
  } catch (error) {
    throw new ConfigError(`RECON_ACCOUNTS_FILE ${file}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed.accounts) || parsed.accounts.length === 0) {
    throw new ConfigError(`RECON_ACCOUNTS_FILE ${file}: "accounts" must be a non-empty list`);
  }
  const list = parsed.accounts.map((raw: Record<string, unknown>, i): Account => {
    const name = text(raw.name);
    if (!name || !ACCOUNT_NAME.test(name)) {
      throw new ConfigError(
        `RECON_ACCOUNTS_FILE accounts[${i}].name: 1-32 lower-case letters, digits or - (got ${JSON.stringify(raw.name)})`,
      );
    }
    const where = `RECON_ACCOUNTS_FILE account ${name}`;
    return {
      name,
      environment: (text(raw.environment) ?? environment) as Environment,
      legacyMerchantId: text(raw.legacyMerchantId),
      notificationSecret: secret(raw.notificationSecret as SecretRef | undefined, where, env),
      currency: text(raw.currency),
    };
  });
  const seen = new Set<string>();
  for (const a of list) {
    if (seen.has(a.name)) throw new ConfigError(`RECON_ACCOUNTS_FILE: account ${a.name} is listed twice`);
    seen.add(a.name);
  }
  return accountsOf(list);
}
