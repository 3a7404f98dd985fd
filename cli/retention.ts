import { type Command, InvalidArgumentError } from 'commander';
import { runCommand } from './run.ts';

function days(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('use a whole number of days, 0 or more');
  return Number(value);
}

export function registerRetention(program: Command): void {
  program
    .command('retention')
    .description(
      "clear consumers' personal data from raw lines, payloads, refused bodies and history older than DAYS (business columns stay); idempotent",
    )
    .requiredOption('--raw-older-than <days>', 'clear what was stored more than DAYS days ago', days)
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', '\nExample:\n  recon retention --raw-older-than 90')
    .action((opts: { rawOlderThan: number; json?: boolean }) =>
      runCommand(async (config) => {
        const { openDatabase } = await import('../db/connect.ts');
        const { clearPersonalData, formatRetention } =
          await import('../lib/retention/clear-personal-data.ts');
        const handle = await openDatabase(config);
        try {
          const summary = await clearPersonalData(handle.db, { olderThanDays: opts.rawOlderThan });
          process.stdout.write(
            opts.json ? `${JSON.stringify(summary, null, 2)}\n` : formatRetention(summary),
          );
        } finally {
          await handle.close();
        }
      }),
    );
}
