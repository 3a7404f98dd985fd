import type { Command } from 'commander';
import { dateArg, wholeNumberArg } from './options.ts';
import { runCommand } from './run.ts';

interface DemoOptions {
  from: string;
  to: string;
  transactions: number;
  keep?: boolean;
  fresh?: boolean;
  serve?: boolean;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      "the whole pipeline on embedded defaults: the embedded warehouse of RECON_DATA_DIR (kept afterwards for recon report, recon reconcile and recon warehouse psql), an ephemeral Temporal dev server with its web UI, the sandbox provider with two accounts (ca-main in CAD, us-main in USD) and a worker; runs a backfill over several months and one nightly run, then prints the reconciliation summary, each account's score against the discrepancies the sandbox planted, and a few discrepancies explained and resolved (docs/getting-started.md). Ctrl-C stops everything cleanly",
    )
    .option(
      '--from <YYYY-MM-DD>',
      'first Eastern day of the sandbox history and the backfill',
      dateArg,
      '2026-04-01',
    )
    .option('--to <YYYY-MM-DD>', 'last Eastern day', dateArg, '2026-09-30')
    .option(
      '--transactions <n>',
      'transactions in the sandbox history of ca-main (us-main has a third of them)',
      wholeNumberArg(1),
      6000,
    )
    .option('--fresh', 'delete the warehouse of the data directory first and start over')
    .option(
      '--keep',
      'keep Temporal and its web UI running at the end until Ctrl-C (the warehouse is kept in any case)',
    )
    .option(
      '--serve',
      'at the end, serve the workbench (recon serve) over the demo warehouse and print a demo sign-in; runs until Ctrl-C',
    )
    .action((options: DemoOptions) =>
      runCommand(async (config) => {
        const { runDemo } = await import('../sandbox/run-demo.ts');
        return runDemo(config, {
          from: options.from,
          to: options.to,
          transactions: options.transactions,
          keep: options.keep === true,
          fresh: options.fresh === true,
          serve: options.serve === true,
        });
      }),
    );
}
