import { type Command, Option } from 'commander';
import { SOURCES } from '../domain/records.ts';
import { MAX_REJECTED_HELP, wholeNumberArg, withDateRange, accountOption } from './options.ts';
import { describeError, EXIT, runCommand } from './run.ts';

interface PullCliOptions {
  source: (typeof SOURCES)[number];
  from: string;
  to: string;
  output: 'JSON' | 'CSV';
  zip?: boolean;
  maxRejected?: number;
  account?: string;
}

export function registerPull(program: Command): void {
  withDateRange(
    program
      .command('pull')
      .description(
        'fetch one source for one window of Eastern days (at most 40) from the provider and load it, without Temporal; prints the load summary as JSON',
      )
      .addOption(new Option('--source <source>', 'what to pull').choices(SOURCES).makeOptionMandatory()),
    'days',
  )
    .addOption(
      new Option('--output <type>', 'report API output type (report sources)')
        .choices(['JSON', 'CSV'])
        .default('JSON'),
    )
    .option('--zip', 'ask the report API for a zipped body (report sources)')
    .option('--max-rejected <n>', MAX_REJECTED_HELP, wholeNumberArg(0))
    .addOption(
      accountOption(
        'the provider account to pull (recon accounts list); default every account, one after another (a JSON array then, when there are several)',
      ),
    )
    .action((options: PullCliOptions) =>
      runCommand(async (config) => {
        const { configForAccount, loadAccounts, selectAccounts } = await import('../config/accounts.ts');
        const { createAccountClient } = await import('../provider/client/account-client.ts');
        const { pullSource } = await import('../ingest/pull-source.ts');
        const { openDatabase } = await import('../db/connect.ts');
        const { warnRejected } = await import('./load-file.ts');
        const accounts = loadAccounts();
        const selected = selectAccounts(accounts, options.account);
        const handle = await openDatabase(config);
        const summaries: unknown[] = [];
        let failed = 0;
        try {
          for (const account of selected) {
            const client = createAccountClient(config, accounts, account);
            try {
              const summary = await pullSource(
                { handle, client, config: configForAccount(config, account) },
                {
                  source: options.source,
                  from: options.from,
                  to: options.to,
                  origin: 'pull',
                  account: account.name,
                  output: { type: options.output, zip: options.zip === true },
                  ...(options.maxRejected !== undefined ? { maxRejected: options.maxRejected } : {}),
                },
              );
              summaries.push(selected.length > 1 ? { account: account.name, ...summary } : summary);
              warnRejected(summary);
            } catch (error) {
              // One account's failure does not stop the others; alone, it is the command's error.
              if (selected.length === 1) throw error;
              failed++;
              process.stderr.write(`recon: account ${account.name}: ${describeError(error)}\n`);
            } finally {
              await client.close();
            }
          }
        } finally {
          await handle.close();
        }
        const out = selected.length === 1 ? summaries[0] : summaries;
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        return failed > 0 ? EXIT.failed : 0;
      }),
    );
}
