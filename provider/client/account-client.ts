/** The provider client of one account of RECON_ACCOUNTS_FILE (or of the account `default`). */
import type { Config } from '../../config/config.ts';
import { configForAccount, type Account, type Accounts } from '../../config/accounts.ts';
import { createProviderClient, type ProviderClient, type ProviderClientOptions } from './index.ts';
import { accountSettingNames } from './setting-names.ts';

/**
 * A client that speaks for `account` only: its credentials, URLs and environment, and messages that
 * name its fields in the accounts file (or the RECON_* variables when the accounts come from the
 * environment). Each account's client holds its own token.
 */
export function createAccountClient(
  config: Config,
  accounts: Accounts,
  account: Account,
  options: ProviderClientOptions = {},
): ProviderClient {
  return createProviderClient(configForAccount(config, account), {
    ...options,
    settingNames:
      options.settingNames ??
      (accounts.origin === 'environment' ? undefined : accountSettingNames(account.name)),
  });
}
