import type { Command } from 'commander';
import { wholeNumberArg } from './options.ts';
import { runWithDatabase } from './run.ts';

export function registerRetention(program: Command): void {
  program
    .command('retention')
    .description(
      "clear consumers' personal data from raw lines, payloads, refused bodies and history older than DAYS (business columns stay); idempotent",
    )
    .requiredOption(
      '--raw-older-than <days>',
      'clear what was stored more than DAYS days ago',
      wholeNumberArg(0),
    )
    .option('--json', 'print the summary as JSON')
    .action((opts: { rawOlderThan: number; json?: boolean }) =>
      runWithDatabase(async (handle) => {
        const { clearPersonalData, formatRetention } = await import('../db/retention.ts');
        const summary = await clearPersonalData(handle.db, { olderThanDays: opts.rawOlderThan });
        process.stdout.write(opts.json ? `${JSON.stringify(summary, null, 2)}\n` : formatRetention(summary));
      }),
    );
}
