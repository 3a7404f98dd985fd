import type { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';

// Every option that names an account, and every recorded author and note, goes through the one
// parser of cli/options.ts: the same value is refused with the same words by every command, while
// the command line is parsed. The commands' actions are replaced by a capture of their options, so
// that nothing runs (no database, no Temporal) even where a parser is missing.

const ACCOUNT_ERROR = 'give an account name: 1 to 32 of a-z, 0-9 and - (recon accounts list)';

interface Parsed {
  program: Command;
  options: () => Record<string, unknown> | undefined;
}

function leaves(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  if (command.commands.length === 0) return [{ path, command }];
  return command.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

/** The program, each command's action replaced by keeping its options. */
function capturingProgram(): Parsed {
  const program = buildProgram();
  let captured: Record<string, unknown> | undefined;
  for (const { command } of leaves(program)) {
    command.action((...args: unknown[]) => {
      captured = (args.at(-1) as Command).opts();
    });
  }
  return { program, options: () => captured };
}

/** The commander error of `args` (what cli/program.ts turns into the usage line), or null. */
async function parseError(program: Command, args: string[]): Promise<CommanderError | null> {
  try {
    await program.parseAsync(args, { from: 'user' });
    return null;
  } catch (error) {
    return (error as { error?: CommanderError }).error ?? (error as CommanderError);
  }
}

const commandsWithAccount = leaves(buildProgram())
  .filter(({ command }) => command.options.some((o) => o.long === '--account'))
  .map(({ path }) => path.join(' '));

describe('--account: one parser and one error in every command', () => {
  it('is taken by the commands that should take it', () => {
    expect(commandsWithAccount).toEqual(
      expect.arrayContaining(['nightly', 'users add', 'tokens create', 'tolerances set', 'report']),
    );
  });

  it.each(commandsWithAccount)('recon %s refuses a name that is not an account name', async (path) => {
    const { program } = capturingProgram();
    const error = await parseError(program, [...path.split(' '), '--account', 'Not_An_Account']);
    expect(error?.code, path).toBe('commander.invalidArgument');
    expect(error?.message, path).toContain(ACCOUNT_ERROR);
  });

  it('nightly hands the action the checked name', async () => {
    const { program, options } = capturingProgram();
    await program.parseAsync(['nightly', '--date', '2026-04-01', '--account', 'east-1'], { from: 'user' });
    expect(options()?.account).toBe('east-1');
  });

  it.each(['users add ana --role viewer --password-stdin', 'tokens create --role viewer'])(
    'recon %s: a repeated --account collects the names in order',
    async (line) => {
      const { program, options } = capturingProgram();
      await program.parseAsync([...line.split(' '), '--account', 'east', '--account', 'west-2'], {
        from: 'user',
      });
      expect(options()?.account).toEqual(['east', 'west-2']);
      const bad = await parseError(capturingProgram().program, [
        ...line.split(' '),
        '--account',
        'east',
        '--account',
        'West',
      ]);
      expect(bad?.message).toContain(ACCOUNT_ERROR);
    },
  );
});

describe('recon analysts grant --accounts: a list, each name parsed as every --account', () => {
  it('collects the names, trimmed, in order', async () => {
    const { program, options } = capturingProgram();
    await program.parseAsync(['analysts', 'grant', 'ana', '--accounts', 'ca-main, us-main'], {
      from: 'user',
    });
    expect(options()?.accounts).toEqual(['ca-main', 'us-main']);
  });

  it.each(['ca-main,US', 'ca-main,,us-main'])('refuses %j while parsing', async (list) => {
    const error = await parseError(capturingProgram().program, [
      'analysts',
      'grant',
      'ana',
      '--accounts',
      list,
    ]);
    expect(error?.code).toBe('commander.invalidArgument');
    expect(error?.message).toContain(ACCOUNT_ERROR);
  });
});

describe('--by and --note: not blank, trimmed, with the shared error', () => {
  const base = {
    'tolerances set': ['tolerances', 'set', '--account', 'east', '--currency', 'CAD', '--by', 'ana'],
    'tolerances apply': ['tolerances', 'apply', 'settings.json', '--by', 'ana'],
    'rules preview': ['rules', 'preview', '--settings', 'settings.json', '--by', 'ana'],
  };

  it.each(Object.entries(base))('recon %s refuses a blank --by', async (_name, args) => {
    const error = await parseError(capturingProgram().program, [...args.slice(0, -1), '   ']);
    expect(error?.code).toBe('commander.invalidArgument');
    expect(error?.message).toContain('give a non-empty text');
  });

  it('recon tolerances set records the author and the note trimmed', async () => {
    const { program, options } = capturingProgram();
    await program.parseAsync([...base['tolerances set'].slice(0, -1), ' ana ', '--note', ' why '], {
      from: 'user',
    });
    expect(options()).toMatchObject({ by: 'ana', note: 'why' });
  });
});
