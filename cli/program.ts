import { Command } from 'commander';
import { registerBackfill } from './backfill.ts';
import { registerDemo } from './demo.ts';
import { registerImport } from './import.ts';
import { registerLedger } from './ledger.ts';
import { registerMigrate } from './migrate.ts';
import { registerNotifications } from './notifications.ts';
import { registerParse } from './parse.ts';
import { registerPull } from './pull.ts';
import { registerReconcile } from './reconcile.ts';
import { registerReport } from './report.ts';
import { registerSandbox } from './sandbox.ts';
import { registerSchedule } from './schedule.ts';
import { registerServe } from './serve.ts';
import { registerTokens } from './tokens.ts';
import { registerUsers } from './users.ts';
import { registerWorker } from './worker.ts';

/**
 * The `recon` command line. Each command lives in its own module under cli/ and imports its heavy
 * dependencies lazily, so `recon --help` and `recon parse` start fast.
 */
export function buildProgram(): Command {
  const program = new Command('recon')
    .description('ibt-recon: provider reports into Postgres, matched against the ledger and notifications')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: false });
  registerMigrate(program);
  registerParse(program);
  registerImport(program);
  registerLedger(program);
  registerPull(program);
  registerSandbox(program);
  registerNotifications(program);
  registerReconcile(program);
  registerReport(program);
  registerDemo(program);
  registerBackfill(program);
  registerSchedule(program);
  registerWorker(program);
  registerServe(program);
  registerUsers(program);
  registerTokens(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
