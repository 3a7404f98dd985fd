import type { Command } from 'commander';
import { MAX_REJECTED_HELP, wholeNumberArg } from './options.ts';
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
    .action((file: string, options: { maxRejected?: number }) =>
      runCommand(async (config) => {
        const { loadLedger } = await import('../ingest/load/load-ledger.ts');
        const { loadFileAndPrint } = await import('./load-file.ts');
        await loadFileAndPrint(config, file, options.maxRejected, loadLedger);
      }),
    );
}
