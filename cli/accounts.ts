import type { Command } from 'commander';
import { accountOption } from './options.ts';
import type { Config } from '../config/config.ts';
import type { Account, Accounts, SecretField } from '../config/accounts.ts';
import { describeError, EXIT, runCommand } from './run.ts';

/** The settings a listing shows besides the name and environment (never a secret), in this order. */
const LISTED_SETTINGS = [
  'currency',
  'baseUrl',
  'authUrl',
  'queryUrl',
  'clientId',
  'legacyMerchantId',
] as const;
/**
 * Every secret field, whose source a listing shows: written here rather than imported with
 * config/accounts-file.ts (and YAML) at every start; AccountListing's type fails if one is missing.
 */
const LISTED_SECRETS = ['clientSecret', 'legacyMerchantPass', 'notificationSecret'] as const;

/** What `recon accounts list --json` prints for one account: settings and where secrets come from. */
export interface AccountListing extends Record<(typeof LISTED_SETTINGS)[number], string | null> {
  name: string;
  environment: string;
  /** Per secret field: `env NAME`, `file PATH`, or null when unset. Never the secret. */
  secrets: Record<SecretField, string | null>;
  configured: true;
  /** The warehouse holds data for it; null when the warehouse could not be read. */
  inWarehouse: boolean | null;
}

/** An account the warehouse holds data for that this configuration does not name. */
export interface WarehouseOnlyListing {
  name: string;
  configured: false;
  inWarehouse: true;
}

/** Each of `keys` with its value in `record`, or null where the record does not set it. */
function valuesOrNull<K extends string>(
  record: Readonly<Partial<Record<K, string>>>,
  keys: readonly K[],
): Record<K, string | null> {
  return Object.fromEntries(keys.map((key) => [key, record[key] ?? null])) as Record<K, string | null>;
}

export function listing(account: Account, held: readonly string[] | null = null): AccountListing {
  return {
    name: account.name,
    environment: account.environment,
    ...valuesOrNull(account, LISTED_SETTINGS),
    secrets: valuesOrNull(account.secretSources ?? {}, LISTED_SECRETS),
    configured: true,
    inWarehouse: held === null ? null : held.includes(account.name),
  };
}

/**
 * The accounts the warehouse holds data for, or null (with one line on stderr saying why) when it
 * cannot be read: the configured accounts are listed all the same. An embedded warehouse that was
 * never created holds none, and is not created for this.
 */
async function warehouseAccounts(config: Config): Promise<string[] | null> {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { warehousePaths } = await import('../db/embedded-warehouse.ts');
  if (
    config.databaseUrl === undefined &&
    !existsSync(join(warehousePaths(config.dataDir).pgDir, 'PG_VERSION'))
  )
    return [];
  const { openDatabase } = await import('../db/connect.ts');
  const { accountsWithData } = await import('../db/warehouse-accounts.ts');
  const { databaseErrorLine } = await import('../db/connection-errors.ts');
  let handle;
  try {
    handle = await openDatabase(config, { poolSize: 1, schema: 'as-is' });
    return await accountsWithData(handle.db);
  } catch (error) {
    // A warehouse not migrated yet holds no data (no loads table).
    if ((error as { code?: string }).code === '42P01') return [];
    const why = databaseErrorLine(error) ?? describeError(error);
    process.stderr.write(`recon: the warehouse was not read, only the configuration is listed: ${why}\n`);
    return null;
  } finally {
    await handle?.close();
  }
}

function listText(accounts: Accounts, held: readonly string[] | null): string {
  const lines = [
    `accounts from ${accounts.origin === 'environment' ? 'the RECON_* variables' : accounts.origin}`,
  ];
  for (const a of accounts.list.map((account) => listing(account, held))) {
    const where =
      a.inWarehouse === null
        ? ''
        : a.inWarehouse
          ? ': configured, data in the warehouse'
          : ': configured, no data in the warehouse yet';
    lines.push(
      '',
      `${a.name} (${a.environment}${a.currency ? `, ${a.currency}` : ''})${where}`,
      `  report API   ${a.baseUrl ?? '-'}  client id ${a.clientId ?? '-'}`,
      `  auth         ${a.authUrl ?? '-'}`,
      `  legacy query ${a.queryUrl ?? '-'}  merchant id ${a.legacyMerchantId ?? '-'}`,
      `  secrets      ${Object.entries(a.secrets)
        .map(([field, source]) => `${field} ${source === null ? 'not set' : `set (${source})`}`)
        .join(', ')}`,
    );
  }
  const only = (held ?? []).filter((name) => !accounts.byName(name));
  if (only.length > 0) {
    lines.push(
      '',
      `in the warehouse, not configured here: ${only.join(', ')}`,
      '  recon report, recon reconcile and the workbench read their data; recon pull and recon backfill need them configured',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** One step of `recon accounts check`: ok, or the client's one-line error (never a secret). */
async function tryStep(step: () => Promise<void>): Promise<string | null> {
  try {
    await step();
    return null;
  } catch (error) {
    return describeError(error);
  }
}

/**
 * Tries one account against the provider: an OAuth token used on a one-minute report (which proves
 * the token and its permission on the account's resources), and a legacy query of one day of returns.
 */
async function checkAccount(config: Config, accounts: Accounts, account: Account): Promise<string[]> {
  const { createAccountClient } = await import('../provider/client/account-client.ts');
  const failures: string[] = [];
  let client;
  try {
    client = createAccountClient(config, accounts, account, { maxAttempts: 2, maxDelayMs: 2_000 });
  } catch (error) {
    return [describeError(error)];
  }
  try {
    const end = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const report = await tryStep(async () => {
      const res = await client.report({
        queryType: 'TRANSACTION',
        start: new Date(end.getTime() - 60_000).toISOString(),
        end: end.toISOString(),
      });
      res.stream.destroy();
    });
    if (report !== null) failures.push(`token and report API: ${report}`);
    const day = new Date(end.getTime() - 86_400_000).toISOString().slice(0, 10);
    const legacy = await tryStep(async () => {
      const res = await client.legacyQuery({ queryType: '1', from: day, to: day });
      res.stream.destroy();
    });
    if (legacy !== null) failures.push(`legacy query: ${legacy}`);
  } finally {
    await client.close();
  }
  return failures;
}

export function registerAccounts(program: Command): void {
  const accounts = program
    .command('accounts')
    .description('the provider accounts of this warehouse (RECON_ACCOUNTS_FILE, or the account default)');

  accounts
    .command('list')
    .description(
      'show each configured account (environment, URLs, client and merchant ids, which secrets are set and from where, never a secret) and the accounts the warehouse holds data for, and which is which',
    )
    .option('--json', 'print a JSON array instead of text')
    .action((options: { json?: boolean }) =>
      runCommand(async (config) => {
        const { loadAccounts } = await import('../config/accounts.ts');
        const all = loadAccounts();
        const held = await warehouseAccounts(config);
        const only: WarehouseOnlyListing[] = (held ?? [])
          .filter((name) => !all.byName(name))
          .map((name) => ({ name, configured: false, inWarehouse: true }));
        const json = [...all.list.map((a) => listing(a, held)), ...only];
        process.stdout.write(options.json ? `${JSON.stringify(json, null, 2)}\n` : listText(all, held));
      }),
    );

  accounts
    .command('check')
    .description(
      "try each account's OAuth token (on a one-minute report) and legacy credentials (on one day of returns) against the provider; one line per account, exit 1 if any fails",
    )
    .addOption(accountOption('check this account only (default: every account)'))
    .action((options: { account?: string }) =>
      runCommand(async (config) => {
        const { loadAccounts, selectAccounts } = await import('../config/accounts.ts');
        const all = loadAccounts();
        let failed = 0;
        for (const account of selectAccounts(all, options.account)) {
          const failures = await checkAccount(config, all, account);
          if (failures.length > 0) failed++;
          process.stdout.write(
            `${account.name}: ${failures.length === 0 ? 'ok (token, report API, legacy query)' : `FAILED: ${failures.join('; ')}`}\n`,
          );
        }
        return failed > 0 ? EXIT.failed : 0;
      }),
    );
}
