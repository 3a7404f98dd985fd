import type { Command } from 'commander';
import { MAX_REJECTED_HELP, wholeNumberArg, accountOption } from './options.ts';
import { runCommand } from './run.ts';

export function registerLedger(program: Command): void {
  const ledger = program.command('ledger').description('the merchant ledger (book of record)');
  ledger
    .command('import')
    .description(
      'load merchant ledger entries from a CSV (with header) or NDJSON file into merchant_ledger and print a JSON summary',
    )
    .argument('<file>', 'ledger file, CSV or NDJSON (detected from the content)')
    .option('--max-rejected <n>', MAX_REJECTED_HELP, wholeNumberArg(0))
    .addOption(
      accountOption(
        "account of the entries that name none (no account column, no merchant_id of a configured account); default 'default'",
      ),
    )
    .action((file: string, options: { maxRejected?: number; account?: string }) =>
      runCommand(async (config) => {
        const { loadAccounts, selectAccounts } = await import('../config/accounts.ts');
        const { loadLedger } = await import('../ingest/load/load-ledger.ts');
        const { loadFileAndPrint } = await import('./load-file.ts');
        // The configuration decides the account of an entry that does not say: checked before the file is opened.
        const accounts = loadAccounts();
        const [account] = options.account === undefined ? [] : selectAccounts(accounts, options.account);
        const accountOfMerchant = (merchantId: string) => accounts.byMerchantId(merchantId)?.name;
        const knownAccounts = new Set(accounts.list.map((a) => a.name));
        await loadFileAndPrint(config, file, options.maxRejected, (handle, request, input) =>
          loadLedger(
            handle,
            { ...request, ...(account ? { account: account.name } : {}), accountOfMerchant, knownAccounts },
            input,
          ),
        );
      }),
    );
}
