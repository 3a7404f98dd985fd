import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../domain/errors.ts';
import type { ActivityDependencies } from './dependencies.ts';

/**
 * The client and config of `account` on this worker: each account's own credentials. Throws a
 * ConfigError (non-retryable) naming what to do when the worker does not serve the account.
 */
export function accountTarget<Client>(
  deps: ActivityDependencies<Client>,
  account: string,
): { readonly client: Client; readonly config: Config } {
  const target = deps.accounts
    ? deps.accounts.get(account)
    : account === DEFAULT_ACCOUNT
      ? { client: deps.provider, config: deps.config }
      : undefined;
  if (!target) {
    throw new ConfigError(
      `account ${account} is not configured on this worker: add it to RECON_ACCOUNTS_FILE of every worker and restart them`,
    );
  }
  return target;
}
