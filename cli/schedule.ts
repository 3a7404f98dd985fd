import { type Command, InvalidArgumentError } from 'commander';
import type { Client } from '@temporalio/client';
import type { Config } from '../config/config.ts';
import { isClockTime, loadNightlySettings } from '../config/schedule.ts';
import { ConfigError } from '../domain/errors.ts';
import { wholeNumberArg } from './options.ts';
import { runCommand } from './run.ts';

interface CreateOptions {
  at?: string;
  lookbackDays?: number;
  catchupHours: number;
}

function clockArg(value: string): string {
  if (!isClockTime(value)) throw new InvalidArgumentError('give a time HH:MM');
  return value;
}

async function withClient(config: Config, body: (client: Client) => Promise<void>): Promise<void> {
  if (!config.temporalAddress) {
    throw new ConfigError(
      'recon schedule manages the nightly schedule of a Temporal cluster: set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE) to it',
    );
  }
  const { Client, Connection } = await import('@temporalio/client');
  const { reachTemporal } = await import('../workers/reach-temporal.ts');
  const address = config.temporalAddress;
  const connection = await reachTemporal(address, () => Connection.connect({ address }));
  try {
    await body(new Client({ connection, namespace: config.temporalNamespace }));
  } finally {
    await connection.close();
  }
}

export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('manage the nightly Temporal Schedule (id recon-nightly) on TEMPORAL_ADDRESS');

  schedule
    .command('create')
    .description(
      'create the nightly schedule, or update it when it exists: every day at --at in America/Toronto, overlap BUFFER_ONE, explicit catch-up window',
    )
    .option('--at <HH:MM>', 'local time in America/Toronto (env RECON_NIGHTLY_AT; default 02:30)', clockArg)
    .option(
      '--lookback-days <n>',
      'days before the scheduled day also covered (env RECON_NIGHTLY_LOOKBACK_DAYS; default 3)',
      wholeNumberArg(0),
    )
    .option(
      '--catchup-hours <n>',
      'missed runs younger than this are still taken after an outage',
      wholeNumberArg(0),
      72,
    )
    .action((options: CreateOptions) =>
      runCommand((config) =>
        withClient(config, async (client) => {
          const { describeSchedule, upsertNightlySchedule } = await import('../workers/client/schedule.ts');
          const nightly = loadNightlySettings();
          const { created, handle } = await upsertNightlySchedule(client, {
            taskQueue: config.temporalTaskQueue,
            at: options.at ?? nightly.at,
            lookbackDays: options.lookbackDays ?? nightly.lookbackDays,
            catchupWindowHours: options.catchupHours,
          });
          process.stdout.write(
            `${created ? 'created' : 'exists: updated'} ${handle.scheduleId}\n${describeSchedule(await handle.describe())}\n`,
          );
        }),
      ),
    );

  schedule
    .command('describe')
    .description('show the schedule: time, policies, state, recent and next runs')
    .action(() =>
      runCommand((config) =>
        withClient(config, async (client) => {
          const { describeSchedule, NIGHTLY_SCHEDULE_ID } = await import('../workers/client/schedule.ts');
          const d = await client.schedule.getHandle(NIGHTLY_SCHEDULE_ID).describe();
          process.stdout.write(`${describeSchedule(d)}\n`);
        }),
      ),
    );

  for (const [name, what] of [
    ['pause', 'pause the schedule (runs are not started until unpaused)'],
    ['unpause', 'unpause the schedule'],
    ['trigger', 'start one nightly run now, covering today (Eastern) and the look-back'],
  ] as const) {
    schedule
      .command(name)
      .description(what)
      .option('--note <text>', 'note recorded on the schedule (pause/unpause)')
      .action((options: { note?: string }) =>
        runCommand((config) =>
          withClient(config, async (client) => {
            const { NIGHTLY_SCHEDULE_ID } = await import('../workers/client/schedule.ts');
            const handle = client.schedule.getHandle(NIGHTLY_SCHEDULE_ID);
            if (name === 'pause') await handle.pause(options.note ?? 'paused with recon schedule pause');
            else if (name === 'unpause')
              await handle.unpause(options.note ?? 'unpaused with recon schedule unpause');
            else await handle.trigger();
            process.stdout.write(
              `${NIGHTLY_SCHEDULE_ID}: ${name === 'trigger' ? 'triggered' : `${name}d`}\n`,
            );
          }),
        ),
      );
  }
}
