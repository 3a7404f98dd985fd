import type { Command } from 'commander';
import { type ReportCliOptions, withReportOptions } from './parse.ts';
import { runCommand } from './run.ts';

export function registerImport(program: Command): void {
  withReportOptions(
    program
      .command('import')
      .description(
        'load one report file into the warehouse (idempotent, whole or nothing, rejected lines to rejected_rows) and print a JSON summary',
      ),
  ).action((file: string, options: ReportCliOptions) =>
    runCommand(async (config) => {
      const { reportFileOptions } = await import('../lib/ingest/source-of.ts');
      const { openInput } = await import('../lib/ingest/open-input.ts');
      const { openDatabase } = await import('../db/connect.ts');
      const { loadReport } = await import('../lib/ingest/load-report.ts');
      const { progressPrinter } = await import('./ledger.ts');
      const o = reportFileOptions(options);
      const input = await openInput(file);
      const handle = await openDatabase(config);
      try {
        const summary = await loadReport(
          handle,
          {
            ...o,
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
