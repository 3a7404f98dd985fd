/**
 * ConfirmTrans for the receiver (`recon notifications serve --confirm`): each stored notification is
 * confirmed with the client of the account it is filed under, never another account's. A token is
 * good for its own merchant account only (docs/provider-interface.md 2.1), so another account's client
 * would be refused, and the default account's would confirm nothing of the others.
 */
import type { Accounts } from '../../config/accounts.ts';
import type { Config } from '../../config/config.ts';
import { createAccountClient } from '../../provider/client/account-client.ts';
import type { ProviderClient, ProviderClientOptions } from '../../provider/client/index.ts';
import type { ConfirmNotification } from './server.ts';

export interface AccountConfirmations {
  readonly confirm: ConfirmNotification;
  /** Closes every account's client. */
  close(): Promise<void>;
}

/**
 * One client per account, made at once so that an account whose credentials are missing stops the
 * receiver at its start rather than at its first confirmation.
 */
export function confirmPerAccount(
  config: Config,
  accounts: Accounts,
  options: ProviderClientOptions = {},
): AccountConfirmations {
  const clients = new Map<string, ProviderClient>(
    accounts.list.map((account) => [account.name, createAccountClient(config, accounts, account, options)]),
  );
  const clientOf = (name: string): ProviderClient => {
    const client = clients.get(name);
    if (!client) throw new Error(`no provider account ${name} to confirm with`);
    return client;
  };
  return {
    // ConfirmTransactionRequest (docs/provider-interface.md 2.4): the notification's members plus
    // additionalData.
    confirm: async (body, notification) => {
      const answer = await clientOf(notification.account ?? 'default').confirmTransaction({
        ...(body as Record<string, unknown>),
        additionalData: [],
      });
      return { verificationCode: answer.verification_code ?? null };
    },
    close: async () => {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
