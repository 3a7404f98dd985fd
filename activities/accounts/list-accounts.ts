import { DEFAULT_ACCOUNT } from '../../domain/account-name.ts';
import type { ActivityDependencies } from '../dependencies.ts';

/**
 * Builds the activity that names the worker's provider accounts (RECON_ACCOUNTS_FILE, or `default`),
 * so that the nightly run covers the accounts the workers are configured with today. Names only.
 */
export function createListAccounts<Client>(deps: ActivityDependencies<Client>) {
  return async function listAccounts(): Promise<string[]> {
    return [...(deps.accounts?.names ?? [DEFAULT_ACCOUNT])];
  };
}
