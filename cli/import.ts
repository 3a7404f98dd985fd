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
      const { loadReport } = await import('../lib/ingest/load-report.ts');
      const { loadFileAndPrint } = await import('./load-file.ts');
      // Options are checked before the file is opened or the database started.
      const o = reportFileOptions(options);
      await loadFileAndPrint(config, file, (handle, request, input) =>
        loadReport(handle, { ...o, ...request }, input),
      );
    }),
  );
}
