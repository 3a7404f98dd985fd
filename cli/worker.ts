import type { Command } from 'commander';
import { runCommand } from './run.ts';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'run the Temporal worker on TEMPORAL_TASK_QUEUE of TEMPORAL_ADDRESS (unset: an embedded dev server with its web UI) until Ctrl-C or SIGTERM; tuning: RECON_WORKER_ACTIVITY_SLOTS, RECON_WORKER_WORKFLOW_SLOTS, RECON_PROVIDER_ACTIVITIES_PER_SECOND, RECON_WORKER_SHUTDOWN_GRACE_SECONDS',
    )
    .action(() =>
      runCommand(async (config) => {
        const { runWorker } = await import('../workers/run-worker.ts');
        await runWorker(config);
      }),
    );
}
