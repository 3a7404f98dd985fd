import type { Command } from 'commander';
import { runCommand } from './run.ts';

interface DemoOptions {
  from: string;
  to: string;
  transactions: string;
  keep?: boolean;
  serve?: boolean;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'the main job on embedded defaults: a fresh embedded PostgreSQL (in <data dir>/demo, reset each run), an ephemeral Temporal dev server with its web UI, the sandbox provider and a worker; runs a backfill over several months and one nightly run, then prints the reconciliation summary. Ctrl-C stops everything cleanly',
    )
    .option('--from <YYYY-MM-DD>', 'first Eastern day of the sandbox history and the backfill', '2026-04-01')
    .option('--to <YYYY-MM-DD>', 'last Eastern day', '2026-09-30')
    .option('--transactions <n>', 'transactions in the sandbox history', '6000')
    .option(
      '--keep',
      'keep everything running at the end until Ctrl-C (to browse the Temporal UI and query the warehouse)',
    )
    .option(
      '--serve',
      'at the end, serve the workbench (recon serve) over the demo warehouse and print a demo sign-in; runs until Ctrl-C',
    )
    .action((options: DemoOptions) =>
      runCommand(async (config) => {
        const { runDemo } = await import('../workers/run-demo.ts');
        return runDemo(config, {
          from: options.from,
          to: options.to,
          transactions: Number(options.transactions),
          keep: options.keep === true,
          serve: options.serve === true,
        });
      }),
    );
}
