import { type Command, Option } from 'commander';
import { SOURCES } from '../domain/records.ts';
import { dateArg, MAX_REJECTED_HELP, wholeNumberArg } from './options.ts';
import { runCommand } from './run.ts';

interface PullCliOptions {
  source: (typeof SOURCES)[number];
  from: string;
  to: string;
  output: 'JSON' | 'CSV';
  zip?: boolean;
  maxRejected?: number;
}

export function registerPull(program: Command): void {
  program
    .command('pull')
    .description(
      'fetch one source for one window of Eastern days (at most 40) from the provider and load it, without Temporal; prints the load summary as JSON',
    )
    .addOption(new Option('--source <source>', 'what to pull').choices(SOURCES).makeOptionMandatory())
    .requiredOption('--from <YYYY-MM-DD>', 'first Eastern day', dateArg)
    .requiredOption('--to <YYYY-MM-DD>', 'last Eastern day, inclusive', dateArg)
    .addOption(
      new Option('--output <type>', 'report API output type (report sources)')
        .choices(['JSON', 'CSV'])
        .default('JSON'),
    )
    .option('--zip', 'ask the report API for a zipped body (report sources)')
    .option('--max-rejected <n>', MAX_REJECTED_HELP, wholeNumberArg(0))
    .action((options: PullCliOptions) =>
      runCommand(async (config) => {
        const { createProviderClient } = await import('../provider/client/index.ts');
        const { pullSource } = await import('../ingest/pull-source.ts');
        const { openDatabase } = await import('../db/connect.ts');
        const { warnRejected } = await import('./load-file.ts');
        const client = createProviderClient(config);
        try {
          const handle = await openDatabase(config);
          try {
            const summary = await pullSource(
              { handle, client, config },
              {
                source: options.source,
                from: options.from,
                to: options.to,
                origin: 'pull',
                output: { type: options.output, zip: options.zip === true },
                ...(options.maxRejected !== undefined ? { maxRejected: options.maxRejected } : {}),
              },
            );
            process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
            warnRejected(summary);
          } finally {
            await handle.close();
          }
        } finally {
          await client.close();
        }
      }),
    );
}
