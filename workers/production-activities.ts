import { createActivities, type Activities } from '../activities/index.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import type { Config } from '../config/config.ts';
import { configForAccount, singleAccount, type Accounts } from '../config/accounts.ts';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import type { ReconMetrics } from '../observability/metrics.ts';
import type { ProviderClient } from '../provider/client/index.ts';
import { createAccountClient } from '../provider/client/account-client.ts';
import { pullSource } from '../ingest/pull-source.ts';
import { parseWebhooks } from '../reconcile/alerts/webhooks.ts';
import { reconcileRange } from '../reconcile/reconcile-range.ts';

/**
 * The activities of the product: one real provider client per account of `accounts` (the commands
 * pass loadAccounts(): RECON_ACCOUNTS_FILE; default: the account `default` of `config`), the real pull (HTTP stream → parser → loader) and the
 * real matching. `close` releases the clients; the database handle stays the caller's. A malformed
 * RECON_ALERT_WEBHOOKS is refused here, when the worker starts, rather than by the first alert. `accounts` lists the account names, whose provider queues the worker polls.
 */
export function openProductionActivities(
  config: Config,
  handle: DatabaseHandle,
  options: { metrics?: ReconMetrics; accounts?: Accounts } = {},
): { activities: Activities; accounts: readonly string[]; close(): Promise<void> } {
  parseWebhooks(config.alertWebhooks);
  const accounts = options.accounts ?? singleAccount(config);
  const clients = new Map<string, { client: ProviderClient; config: Config }>();
  for (const account of accounts.list) {
    clients.set(account.name, {
      client: createAccountClient(config, accounts, account),
      config: configForAccount(config, account),
    });
  }
  const fallback = clients.get(DEFAULT_ACCOUNT) ?? clients.values().next().value!;
  const activities = createActivities({
    handle,
    provider: fallback.client,
    config,
    accounts: { names: accounts.list.map((a) => a.name), get: (name) => clients.get(name) },
    pullSource,
    reconcileRange,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return {
    activities,
    accounts: accounts.list.map((a) => a.name),
    close: async () => {
      await Promise.all([...clients.values()].map((c) => c.client.close()));
    },
  };
}
