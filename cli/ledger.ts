import type { Command } from 'commander';
import { runCommand } from './run.ts';

/** Progress on stderr, only for a person watching a terminal. */
export function progressPrinter(): ((p: { rowsRead: number; bytes: number }) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (p) => process.stderr.write(`\rread ${p.rowsRead} rows, ${(p.bytes / 1048576).toFixed(1)} MiB`);
}

export function registerLedger(program: Command): void {
  const ledger = program.command('ledger').description('the merchant ledger (book of record)');
  ledger
    .command('import')
    .description(
      'load merchant ledger entries from a CSV (with header) or NDJSON file into merchant_ledger and print a JSON summary',
    )
    .argument('<file>', 'ledger file, CSV or NDJSON (detected from the content)')
    .action((file: string) =>
      runCommand(async (config) => {
        const { openInput } = await import('../lib/ingest/open-input.ts');
        const { openDatabase } = await import('../db/connect.ts');
        const { loadLedger } = await import('../lib/ingest/load-ledger.ts');
        const input = await openInput(file);
        const handle = await openDatabase(config);
        try {
          const summary = await loadLedger(
            handle,
            {
              fileName: file,
              origin: 'file',
              environment: config.environment,
              onProgress: progressPrinter(),
            },
            input,
          );
          if (process.stderr.isTTY) process.stderr.write('\n');
          process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        } finally {
          await handle.close();
        }
      }),
    );
}
