import { readFileSync } from 'node:fs';
import { Command, CommanderError, type Option } from 'commander';
import { registerAccounts } from './accounts.ts';
import { registerAnalysts } from './analysts.ts';
import { registerBackfill } from './backfill.ts';
import { registerNightly } from './nightly.ts';
import { registerDemo } from './demo.ts';
import { registerDiscrepancies } from './discrepancies.ts';
import { registerImport } from './import.ts';
import { registerLedger } from './ledger.ts';
import { registerMatches } from './matches.ts';
import { registerMigrate } from './migrate.ts';
import { registerNotifications } from './notifications.ts';
import { registerParse } from './parse.ts';
import { registerPull } from './pull.ts';
import { registerReconcile } from './reconcile.ts';
import { registerReport } from './report.ts';
import { registerRetention } from './retention.ts';
import { registerSandbox } from './sandbox.ts';
import { registerSchedule } from './schedule.ts';
import { registerServe } from './serve.ts';
import { registerTokens } from './tokens.ts';
import { registerTolerances } from './tolerances.ts';
import { registerUsers } from './users.ts';
import { registerWarehouse } from './warehouse.ts';
import { registerWorker } from './worker.ts';
import { EXAMPLES } from './examples.ts';
import { describeError, setCommandPath, writeUsageError } from './run.ts';

/**
 * The `recon` command line. Each command lives in its own module under cli/ and imports its heavy
 * dependencies lazily, so `recon --help` and `recon parse` start fast.
 *
 * The conventions of docs/reference.md ("Exit codes and errors") are applied here, once, to every command:
 * a usage error is one line and a pointer to --help (exit 2), required options say so in the help,
 * every command's help ends with an example, and a reversed --from/--to range is refused.
 */
export function buildProgram(): Command {
  const program = new Command('recon')
    .description('ibt-recon: provider reports into Postgres, matched against the ledger and notifications')
    .version(packageVersion(), '-V, --version', 'print the version of recon')
    .configureHelp({ sortSubcommands: false });
  registerMigrate(program);
  registerParse(program);
  registerImport(program);
  registerLedger(program);
  registerAccounts(program);
  registerPull(program);
  registerSandbox(program);
  registerNotifications(program);
  registerReconcile(program);
  registerDiscrepancies(program);
  registerMatches(program);
  registerReport(program);
  registerTolerances(program);
  registerWarehouse(program);
  registerRetention(program);
  registerAnalysts(program);
  registerDemo(program);
  registerBackfill(program);
  registerSchedule(program);
  registerNightly(program);
  registerWorker(program);
  registerServe(program);
  registerUsers(program);
  registerTokens(program);
  program.hook('preAction', (_root, action) => {
    setCommandPath(commandPath(action));
    const { from, to } = action.opts<{ from?: unknown; to?: unknown }>();
    // Both are YYYY-MM-DD by then (cli/options.ts dateArg), so text order is date order.
    if (typeof from === 'string' && typeof to === 'string' && from > to) {
      action.error(`--from ${from} is after --to ${to}: give --from on or before --to`, {
        exitCode: 2,
        code: 'recon.reversedRange',
      });
    }
  });
  applyConventions(program);
  return program;
}

function packageVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** A usage error raised by commander, with the command it concerns. */
class CommandLineError extends Error {
  readonly command: Command;
  readonly error: CommanderError;
  constructor(command: Command, error: CommanderError) {
    super(error.message);
    this.command = command;
    this.error = error;
  }
}

function applyConventions(command: Command): void {
  command
    .showHelpAfterError(false)
    .configureOutput({ outputError: () => {} })
    .exitOverride((error) => {
      throw new CommandLineError(command, error);
    });
  for (const option of command.options as Option[]) {
    if (option.mandatory && !option.description.endsWith('(required)')) {
      option.description = `${option.description} (required)`;
    }
  }
  const path = commandPath(command);
  const example = EXAMPLES[path];
  if (example) command.addHelpText('after', `\nExample:\n  $ ${example}\n`);
  if (command.commands.length > 0) {
    // A group without its subcommand (recon discrepancies) is a usage error, not the whole help.
    // With an action of its own, commander adds no `help` subcommand by itself: ask for it.
    command.helpCommand(true);
    command.allowExcessArguments().action(() => {
      const given = command.args[0];
      const names = command.commands.map((c) => c.name()).filter((n) => n !== 'help');
      command.error(
        `${given === undefined ? 'missing command' : `unknown command '${given}'`}: use one of ${names.join(', ')}`,
        { exitCode: 2, code: 'commander.unknownCommand' },
      );
    });
  }
  for (const sub of command.commands) applyConventions(sub);
}

/** Commander's own messages, rewritten to name the option and what it allows, on one line. */
function usageMessage(command: Command, error: CommanderError): string {
  const text = error.message.replace(/^error: /, '');
  const optionOf = (flags: string) => command.options.find((o) => o.flags === flags);
  const allowed = (o: Option | undefined) =>
    o?.argChoices ? `one of ${o.argChoices.join(', ')}` : (/<(.+)>/.exec(o?.flags ?? '')?.[1] ?? 'a value');
  let m: RegExpExecArray | null;
  switch (error.code) {
    case 'commander.missingMandatoryOptionValue':
      if ((m = /^required option '(.+)' not specified$/.exec(text))) {
        const o = optionOf(m[1] as string);
        return `${o?.long ?? m[1]} is required: give ${allowed(o)}`;
      }
      break;
    case 'commander.optionMissingArgument':
      if ((m = /^option '(.+)' argument missing$/.exec(text))) {
        const o = optionOf(m[1] as string);
        return `${o?.long ?? m[1]} needs a value: give ${allowed(o)}`;
      }
      break;
    case 'commander.unknownOption': {
      const known = command.options.map((o) => o.long).filter((l) => l !== undefined);
      return `${text.replace(/\s*\n\s*/g, ' ')}: ${known.length > 0 ? `the options are ${known.join(', ')}` : 'this command takes no option'}`;
    }
    case 'commander.invalidArgument':
      if ((m = /^option '(.+?)' argument '(.*)' is invalid\. ([^]*)$/.exec(text))) {
        const o = optionOf(m[1] as string);
        const reason = o?.argChoices ? `use ${allowed(o)}` : (m[3] as string);
        return `${o?.long ?? m[1]} ${JSON.stringify(m[2])} is not valid: ${reason}`;
      }
      if ((m = /^command-argument value '(.*)' is invalid for argument '(.+?)'\. ([^]*)$/.exec(text))) {
        return `<${m[2]}> ${JSON.stringify(m[1])} is not valid: ${m[3]}`;
      }
      break;
  }
  return text.replace(/\s*\n\s*/g, ' ');
}

export async function main(argv: string[]): Promise<void> {
  // `recon ... | head`: a reader that goes away is the end of the output, not a crash.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (!(error instanceof CommandLineError)) {
      // runCommand catches what a command throws; this is only what escaped it: still one line.
      process.stderr.write(`recon: ${describeError(error)}\n`);
      process.exitCode = 1;
      return;
    }
    const { command, error: e } = error;
    // --help and --version end through the same override, with their own exit code (0).
    if (
      e.code === 'commander.helpDisplayed' ||
      e.code === 'commander.version' ||
      e.code === 'commander.help'
    ) {
      process.exitCode = e.exitCode;
      return;
    }
    writeUsageError(commandPath(command), usageMessage(command, e));
  }
}
