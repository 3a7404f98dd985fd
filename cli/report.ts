import type { Command } from 'commander';
import { dateArg, outputFileArg } from './options.ts';
import { runCommand } from './run.ts';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      'the reconciliation summary of Eastern business dates FROM..TO: which dates no reconcile run checked, counts and cents per currency by kind and by day; --json the same as JSON, --html writes a self-contained page with charts, --csv the discrepancies',
    )
    .requiredOption('--from <YYYY-MM-DD>', 'first Eastern business date', dateArg)
    .requiredOption('--to <YYYY-MM-DD>', 'last Eastern business date', dateArg)
    .option('--html <file>', 'write an HTML report with inline SVG charts', outputFileArg)
    .option('--csv <file>', 'write the discrepancies of the range as CSV', outputFileArg)
    .option('--json', 'print the report as JSON (every amount_cents with its currency) instead of text')
    .action((opts: { from: string; to: string; html?: string; csv?: string; json?: boolean }) =>
      runCommand(async (config) => {
        const { writeFileSync } = await import('node:fs');
        const { openDatabase } = await import('../db/connect.ts');
        const { loadReportData } = await import('../reconcile/report/report-data.ts');
        const { formatReport, reportJson } = await import('../reconcile/report/format-summary.ts');
        const handle = await openDatabase(config);
        try {
          const data = await loadReportData(handle.db, { from: opts.from, to: opts.to });
          // With --json, stdout is the JSON document alone; the file notes go to stderr.
          const note = (line: string) => (opts.json ? process.stderr : process.stdout).write(line);
          process.stdout.write(
            opts.json ? `${JSON.stringify(reportJson(data), null, 2)}\n` : formatReport(data),
          );
          if (opts.html) {
            const { renderHtmlReport } = await import('../reconcile/report/render-html.ts');
            writeFileSync(opts.html, renderHtmlReport(data));
            note(`\nHTML report written to ${opts.html}\n`);
          }
          if (opts.csv) {
            const { discrepanciesCsv } = await import('../reconcile/report/write-csv.ts');
            writeFileSync(opts.csv, discrepanciesCsv(data.discrepancies));
            note(`${data.discrepancies.length} discrepancies written to ${opts.csv}\n`);
          }
        } finally {
          await handle.close();
        }
      }),
    );
}
