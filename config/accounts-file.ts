/**
 * The accounts file (RECON_ACCOUNTS_FILE, docs/connecting-a-provider.md, "Several accounts"): JSON or YAML,
 * `{ accounts: [ { name, environment, baseUrl?, authUrl?, queryUrl?, clientId?, clientSecret?,
 * legacyMerchantId?, legacyMerchantPass?, notificationSecret?, currency? } ] }`.
 *
 * Validation is pure and collects every problem, each prefixed with the path of its field
 * (`accounts[1].clientSecret`), so that one run of the command shows everything to fix. Problems never
 * quote a value given for a secret field: an inline secret is refused without being echoed.
 */
import { parse as parseYaml } from 'yaml';
import { isAccountName } from '../domain/account-name.ts';
import type { Environment } from './config.ts';
import type { SecretRef } from './secret-ref.ts';

export const SECRET_FIELDS = ['clientSecret', 'legacyMerchantPass', 'notificationSecret'] as const;
export type SecretField = (typeof SECRET_FIELDS)[number];

const URL_FIELDS = ['baseUrl', 'authUrl', 'queryUrl'] as const;
const PLAIN_FIELDS = ['clientId', 'legacyMerchantId'] as const;
const KNOWN_FIELDS = new Set<string>([
  'name',
  'environment',
  'currency',
  ...URL_FIELDS,
  ...PLAIN_FIELDS,
  ...SECRET_FIELDS,
]);

/** One account as written in the file: secrets are still references. */
export interface AccountEntry {
  name: string;
  environment: Environment | undefined;
  baseUrl?: string;
  authUrl?: string;
  queryUrl?: string;
  clientId?: string;
  legacyMerchantId?: string;
  currency?: string;
  secrets: Partial<Record<SecretField, SecretRef>>;
}

/** Parses the file's text: JSON for `*.json`, YAML (a superset of JSON) otherwise. */
export function parseAccountsText(text: string, path: string): { value: unknown } | { problem: string } {
  try {
    return { value: path.toLowerCase().endsWith('.json') ? JSON.parse(text) : parseYaml(text) };
  } catch (error) {
    // Parser messages can quote the text around the error, which may be an inline secret.
    const where = /line (\d+)|position (\d+)/.exec((error as Error).message)?.[0];
    return {
      problem: `is not valid ${path.toLowerCase().endsWith('.json') ? 'JSON' : 'YAML or JSON'}${where ? ` (${where})` : ''}: fix its syntax`,
    };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function httpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

function secretRef(value: unknown, at: string, problems: string[]): SecretRef | undefined {
  if (typeof value === 'string' || typeof value === 'number') {
    problems.push(
      `${at}: a secret is never written in the accounts file: use { "env": "VARIABLE" } or { "file": "/run/secrets/…" }`,
    );
    return undefined;
  }
  if (!isRecord(value)) {
    problems.push(`${at}: must be { "env": "VARIABLE" } or { "file": "PATH" }`);
    return undefined;
  }
  const keys = Object.keys(value);
  if (keys.length !== 1 || (keys[0] !== 'env' && keys[0] !== 'file')) {
    problems.push(
      `${at}: must have exactly one of "env" or "file" (found ${keys.map((k) => JSON.stringify(k)).join(', ') || 'none'})`,
    );
    return undefined;
  }
  const target = value[keys[0]!];
  if (typeof target !== 'string' || target.trim() === '') {
    problems.push(`${at}.${keys[0]}: must be a non-empty string`);
    return undefined;
  }
  if (keys[0] === 'env') {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(target)) {
      problems.push(`${at}.env: ${JSON.stringify(target)} is not an environment variable name`);
      return undefined;
    }
    return { env: target };
  }
  return { file: target };
}

function entry(raw: unknown, at: string, problems: string[]): AccountEntry | undefined {
  if (!isRecord(raw)) {
    problems.push(`${at}: must be an object with at least "name"`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(key)) {
      problems.push(`${at}.${key}: unknown field; the fields are ${[...KNOWN_FIELDS].join(', ')}`);
    }
  }
  const name = raw.name;
  if (!isAccountName(name)) {
    problems.push(
      `${at}.name: ${name === undefined ? 'is missing' : `${JSON.stringify(name)} is not a name`}: use 1 to 32 of a-z, 0-9 and -`,
    );
  }
  const environment = raw.environment;
  if (environment !== undefined && environment !== 'staging' && environment !== 'production') {
    problems.push(
      `${at}.environment: ${JSON.stringify(environment)} is not valid: use staging or production`,
    );
  }
  const result: AccountEntry = {
    name: name as string,
    environment: environment as Environment | undefined,
    secrets: {},
  };
  for (const field of URL_FIELDS) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !httpUrl(value)) {
      problems.push(`${at}.${field}: must be an http(s) address without user or password`);
    } else result[field] = value.replace(/\/+$/, '');
  }
  for (const field of PLAIN_FIELDS) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '') {
      problems.push(`${at}.${field}: must be a non-empty string`);
    } else result[field] = value.trim();
  }
  if (raw.currency !== undefined) {
    if (typeof raw.currency !== 'string' || !/^[A-Z]{3}$/.test(raw.currency)) {
      problems.push(`${at}.currency: ${JSON.stringify(raw.currency)} is not an ISO 4217 code such as CAD`);
    } else result.currency = raw.currency;
  }
  for (const field of SECRET_FIELDS) {
    if (raw[field] === undefined) continue;
    const ref = secretRef(raw[field], `${at}.${field}`, problems);
    if (ref) result.secrets[field] = ref;
  }
  return problems.length === before ? result : undefined;
}

/**
 * Validates a parsed accounts file. Returns the entries when there is no problem; otherwise every
 * problem found, each starting with the path of its field.
 */
export function validateAccountsFile(value: unknown): { entries: AccountEntry[]; problems: string[] } {
  const problems: string[] = [];
  if (!isRecord(value)) {
    return { entries: [], problems: ['must be an object { "accounts": [ … ] }'] };
  }
  for (const key of Object.keys(value)) {
    if (key !== 'accounts') problems.push(`${key}: unknown field; the file holds only "accounts"`);
  }
  const list = value.accounts;
  if (!Array.isArray(list) || list.length === 0) {
    problems.push('accounts: must be a list of at least one account');
    return { entries: [], problems };
  }
  const entries: AccountEntry[] = [];
  list.forEach((raw, i) => {
    const parsed = entry(raw, `accounts[${i}]`, problems);
    if (parsed) entries.push(parsed);
  });
  const seenNames = new Map<string, number>();
  const seenMerchants = new Map<string, number>();
  list.forEach((raw, i) => {
    if (!isRecord(raw)) return;
    if (typeof raw.name === 'string') {
      const first = seenNames.get(raw.name);
      if (first !== undefined) {
        problems.push(
          `accounts[${i}].name: ${JSON.stringify(raw.name)} is already the name of accounts[${first}]`,
        );
      } else seenNames.set(raw.name, i);
    }
    if (typeof raw.legacyMerchantId === 'string') {
      const first = seenMerchants.get(raw.legacyMerchantId.trim());
      if (first !== undefined) {
        problems.push(
          `accounts[${i}].legacyMerchantId: ${JSON.stringify(raw.legacyMerchantId)} is already the merchant id of accounts[${first}]`,
        );
      } else seenMerchants.set(raw.legacyMerchantId.trim(), i);
    }
  });
  return { entries: problems.length === 0 ? entries : [], problems };
}
