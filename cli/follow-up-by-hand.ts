import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/database.ts';

/**
 * `recon reconcile --follow-up-pending HOURS`: the nightly follow-up (ingest/follow-up) by hand, for
 * each account (or the one named), each with its own client and credentials, before the matching.
 * Prints one line of counts per account on stderr.
 */
export async function followUpByHand(
  config: Config,
  db: Kysely<Database>,
  req: { to: string; pendingForHours: number; account?: string },
): Promise<void> {
  const { loadAccounts, selectAccounts, configForAccount } = await import('../config/accounts.ts');
  const { createAccountClient } = await import('../provider/client/account-client.ts');
  const { followUpNonFinal } = await import('../ingest/follow-up/follow-up-non-final.ts');
  const { addDays } = await import('../domain/time/calendar.ts');
  const accounts = loadAccounts();
  for (const account of selectAccounts(accounts, req.account)) {
    const client = createAccountClient(config, accounts, account);
    try {
      const followed = await followUpNonFinal(db, {
        account: account.name,
        environment: configForAccount(config, account).environment,
        origin: 'pull',
        lookupStatus: (id) => client.transactionStatus(id),
        day: req.to,
        before: addDays(req.to, 1),
        horizonDays: config.followUp.days,
        limit: config.followUp.perNight,
        pendingForHours: req.pendingForHours,
        askAgainAfterHours: req.pendingForHours,
      });
      process.stderr.write(`status follow-up: ${JSON.stringify(followed)}\n`);
    } finally {
      await client.close();
    }
  }
}
