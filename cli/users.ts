import { type Command, InvalidArgumentError } from 'commander';
import { isAccountName } from '../domain/account-name.ts';
import { runCommand, runWithDatabase } from './run.ts';

/** commander parser for a repeatable --account: each name checked, collected in order. */
export function accountArg(value: string, previous: string[] = []): string[] {
  if (!isAccountName(value))
    throw new InvalidArgumentError('an account name is 1 to 32 of a-z, 0-9 and - (recon accounts list)');
  return [...previous, value];
}

/** commander parser for --role: viewer, operator or admin. */
export function parseRole(value: string): 'viewer' | 'operator' | 'admin' {
  if (value === 'viewer' || value === 'operator' || value === 'admin') return value;
  throw new InvalidArgumentError('use viewer, operator or admin');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export function registerUsers(program: Command): void {
  const users = program.command('users').description('workbench users (recon serve): add or disable');
  users
    .command('add <name>')
    .description(
      'add a workbench user, or set the role, password and accounts of an existing one (and enable it again); changing a user ends its sessions',
    )
    .option(
      '--account <name>',
      'limit the user to this provider account (repeat for more); without it: every account',
      accountArg,
    )
    .requiredOption('--role <role>', 'viewer, operator or admin', parseRole)
    .requiredOption('--password-stdin', 'read the password from standard input (at least 12 characters)')
    .action((name: string, opts: { role: 'viewer' | 'operator' | 'admin'; account?: string[] }) =>
      runCommand(async (config) => {
        const password = await readStdin();
        const { openDatabase } = await import('../db/connect.ts');
        const { addUser } = await import('../workbench/auth/accounts.ts');
        const handle = await openDatabase(config, { poolSize: 1 });
        try {
          const accounts = opts.account ?? [];
          const { created } = await addUser(handle.db, {
            username: name,
            role: opts.role,
            password,
            accounts,
          });
          const scope = accounts.length ? `accounts ${accounts.join(', ')}` : 'every account';
          process.stdout.write(
            `${created ? 'added' : 'updated'} user ${name} (${opts.role}, ${scope})${created ? '' : '; its sessions ended'}\n`,
          );
        } finally {
          await handle.close();
        }
      }),
    );
  users
    .command('disable <name>')
    .description('disable a workbench user and end its sessions')
    .action((name: string) =>
      runWithDatabase(
        async (handle) => {
          const { disableUser } = await import('../workbench/auth/accounts.ts');
          await disableUser(handle.db, name);
          process.stdout.write(`disabled user ${name}\n`);
        },
        { poolSize: 1 },
      ),
    );
}
