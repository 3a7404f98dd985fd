import { once } from 'node:events';
import type { Command } from 'commander';
import { runCommand } from './run.ts';

/** --format, --query-type and --fields, shared by `recon parse` and `recon import`. */
export function withReportOptions(command: Command): Command {
  return command
    .requiredOption('--format <format>', 'legacy, report-json or report-csv')
    .option('--query-type <type>', 'legacy 1|4|5|6, or report TRANSACTION|RETURN')
    .option(
      '--fields <list>',
      'legacy response_fields: field numbers of the columns, in order (types 5 and 6)',
    )
    .argument('<file>', 'the report file (a ZIP archive is recognised by its content)');
}

/** reportFileOptions of the command line: a bad combination is a usage error (exit 2, --help hint). */
export async function checkedReportOptions(options: ReportCliOptions) {
  const { reportFileOptions } = await import('../ingest/load/source-of.ts');
  const { ConfigError, UsageError } = await import('../domain/errors.ts');
  try {
    return reportFileOptions(options);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

export interface ReportCliOptions {
  format?: string;
  queryType?: string;
  fields?: string;
}

export function registerParse(program: Command): void {
  withReportOptions(
    program
      .command('parse')
      .description(
        'print the normalised records of one report file as NDJSON (warehouse column names); rejected lines and reasons go to stderr; loads nothing',
      ),
  ).action((file: string, options: ReportCliOptions) =>
    runCommand(async () => {
      const { openInput } = await import('../ingest/load/open-input.ts');
      const { loadParsers } = await import('../ingest/load/parsers.ts');
      const { redactPersonal } = await import('../domain/privacy.ts');
      const o = await checkedReportOptions(options);
      const input = await openInput(file);
      const { parseReport } = await loadParsers();
      let rejected = 0;
      let buffer = '';
      const flush = async () => {
        if (buffer && !process.stdout.write(buffer)) await once(process.stdout, 'drain');
        buffer = '';
      };
      for await (const row of parseReport(input, {
        format: o.format,
        queryType: o.queryType,
        fields: o.fields,
        fileName: file,
      })) {
        if (row.ok) {
          buffer += `${JSON.stringify(row.record)}\n`;
          if (buffer.length > 64 * 1024) await flush();
        } else {
          rejected++;
          process.stderr.write(
            `${file}:${row.line}: rejected: ${redactPersonal(`${row.reason}: ${JSON.stringify(row.raw)}`)}\n`,
          );
        }
      }
      await flush();
      if (rejected > 0) process.stderr.write(`${file}: ${rejected} line(s) rejected\n`);
    }),
  );
}
