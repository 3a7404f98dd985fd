import type { Command } from 'commander';
import { checkedReportOptions, type ReportCliOptions, withReportOptions } from './parse.ts';
import { MAX_REJECTED_HELP, wholeNumberArg, accountOption } from './options.ts';
import { runCommand } from './run.ts';

export function registerImport(program: Command): void {
  withReportOptions(
    program
      .command('import')
      .description(
        'load one report file into the warehouse (idempotent, whole or nothing, rejected lines to rejected_rows) and print a JSON summary',
      ),
  )
    .option('--max-rejected <n>', MAX_REJECTED_HELP, wholeNumberArg(0))
    .addOption(
      accountOption("the provider account the file belongs to (recon accounts list); default 'default'"),
    )
    .action((file: string, options: ReportCliOptions & { maxRejected?: number; account?: string }) =>
      runCommand(async (config) => {
        const { loadReport } = await import('../ingest/load/load-report.ts');
        const { loadFileAndPrint } = await import('./load-file.ts');
        // Options are checked before the file is opened or the database started.
        const o = await checkedReportOptions(options);
        // The accounts file (and its YAML parser, some 25 ms of the start) only when --account names one.
        const name = options.account;
        const [account] =
          name === undefined
            ? []
            : await import('../config/accounts.ts').then((a) => a.selectAccounts(a.loadAccounts(), name));
        await loadFileAndPrint(config, file, options.maxRejected, (handle, request, input) =>
          loadReport(handle, { ...o, ...request, ...(account ? { account: account.name } : {}) }, input),
        );
      }),
    );
}
