import { InvalidArgumentError, type Command } from 'commander';
import { workbenchUrl } from '../config/config.ts';
import { outputFileArg, withDateRange, accountOption } from './options.ts';
import { runCommand, withDatabase } from './run.ts';

function workbenchUrlArg(value: string): string {
  const url = workbenchUrl(value);
  if (url === null)
    throw new InvalidArgumentError(
      'give the workbench address, e.g. https://recon.example.com (no user or password)',
    );
  return url;
}

export function registerReport(program: Command): void {
  withDateRange(
    program
      .command('report')
      .description(
        'the reconciliation summary of Eastern business dates FROM..TO: which dates no reconcile run checked, counts and cents per currency by kind, the largest and oldest open items with their ids, by day; --json the same as JSON, --html writes a self-contained page (what needs attention first, charts last), --csv the discrepancies',
      ),
    'business dates',
  )
    .option('--html <file>', 'write an HTML report with inline SVG charts', outputFileArg)
    .option(
      '--workbench-url <url>',
      'the workbench address (recon serve) the HTML report links each discrepancy id to; default RECON_WORKBENCH_URL',
      workbenchUrlArg,
    )
    .option('--csv <file>', 'write the discrepancies of the range as CSV', outputFileArg)
    .option('--json', 'print the report as JSON (every amount_cents with its currency) instead of text')
    .addOption(accountOption('report on this provider account only (default: every account)'))
    .action(
      (opts: {
        from: string;
        to: string;
        html?: string;
        csv?: string;
        json?: boolean;
        workbenchUrl?: string;
        account?: string;
      }) =>
        runCommand(async (config) => {
          const { writeFileSync } = await import('node:fs');
          const { loadReportData } = await import('../reconcile/report/report-data.ts');
          const { formatReport, reportJson } = await import('../reconcile/report/format-summary.ts');
          // RECON_WORKBENCH_URL is checked with the rest of the configuration (config/config.ts).
          const linkTo = opts.workbenchUrl ?? config.workbenchUrl;
          return withDatabase(config, async ({ db }) => {
            if (opts.account !== undefined) {
              const { requireKnownAccount } = await import('./known-account.ts');
              await requireKnownAccount(db, opts.account);
            }
            const data = await loadReportData(db, { from: opts.from, to: opts.to }, opts.account);
            // With --json, stdout is the JSON document alone; the file notes go to stderr.
            const note = (line: string) => (opts.json ? process.stderr : process.stdout).write(line);
            process.stdout.write(
              opts.json ? `${JSON.stringify(reportJson(data), null, 2)}\n` : formatReport(data),
            );
            if (opts.html) {
              const { renderHtmlReport } = await import('../reconcile/report/render-html.ts');
              writeFileSync(opts.html, renderHtmlReport(data, linkTo ? { workbenchUrl: linkTo } : {}));
              note(`\nHTML report written to ${opts.html}\n`);
            }
            if (opts.csv) {
              const { discrepanciesCsv } = await import('../reconcile/report/write-csv.ts');
              writeFileSync(opts.csv, discrepanciesCsv(data.discrepancies));
              note(`${data.discrepancies.length} discrepancies written to ${opts.csv}\n`);
            }
          });
        }),
    );
  registerWriteOffs(program);
}

function monthArg(value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw new InvalidArgumentError('give a month, written YYYY-MM');
  return value;
}

/** `recon write-offs --month YYYY-MM`: the month's write-offs, totals per currency (reconcile/tolerances/). */
function registerWriteOffs(program: Command): void {
  program
    .command('write-offs')
    .description(
      'the write-offs of an Eastern month (by when written off), each with its reason, and their totals per currency (never added across currencies); --csv for the accountant',
    )
    .requiredOption('--month <YYYY-MM>', 'the Eastern month', monthArg)
    .addOption(accountOption('this provider account only (default: every account)'))
    .option('--csv <file>', 'write the write-offs as CSV', outputFileArg)
    .option('--json', 'print the report as JSON')
    .action((opts: { month: string; account?: string; csv?: string; json?: boolean }) =>
      runCommand(async (config) => {
        const { writeFileSync } = await import('node:fs');
        const { formatWriteOffs, writeOffReport, writeOffsCsv } =
          await import('../reconcile/tolerances/write-off-report.ts');
        return withDatabase(config, async ({ db }) => {
          const data = await writeOffReport(db, { month: opts.month, account: opts.account ?? null });
          process.stdout.write(opts.json ? `${JSON.stringify(data, null, 2)}\n` : formatWriteOffs(data));
          if (opts.csv) {
            writeFileSync(opts.csv, writeOffsCsv(data));
            (opts.json ? process.stderr : process.stdout).write(
              `${data.lines.length} write-off(s) written to ${opts.csv}\n`,
            );
          }
        });
      }),
    );
}
