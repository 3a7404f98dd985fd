import { type Command, InvalidArgumentError } from 'commander';
import type { AccountName } from '../domain/account-name.ts';
import type { Db } from '../db/database.ts';
import { accountsOption } from './options.ts';
import { runCommand, runWithDatabase, withDatabase } from './run.ts';

type WorkbenchAuth = typeof import('../workbench/auth/accounts.ts');

/**
 * Runs a `recon users` or `recon tokens` body with the workbench's users and tokens
 * (workbench/auth/accounts.ts, loaded only then) and a warehouse of one connection.
 */
export function runWithAuth(body: (auth: WorkbenchAuth, db: Db) => Promise<void>): Promise<void> {
  return runWithDatabase(async (handle) => body(await import('../workbench/auth/accounts.ts'), handle.db), {
    poolSize: 1,
  });
}

/** Which accounts a user or token may see, in words: `accounts a, b`, or `every account`. */
export function accountScope(accounts: readonly string[]): string {
  return accounts.length ? `accounts ${accounts.join(', ')}` : 'every account';
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
    .addOption(
      accountsOption('limit the user to this provider account (repeat for more); without it: every account'),
    )
    .requiredOption('--role <role>', 'viewer, operator or admin', parseRole)
    .requiredOption('--password-stdin', 'read the password from standard input (at least 12 characters)')
    .action((name: string, opts: { role: 'viewer' | 'operator' | 'admin'; account?: AccountName[] }) =>
      runCommand(async (config) => {
        const password = await readStdin();
        const { addUser } = await import('../workbench/auth/accounts.ts');
        return withDatabase(
          config,
          async ({ db }) => {
            const accounts = opts.account ?? [];
            const { created } = await addUser(db, { username: name, role: opts.role, password, accounts });
            process.stdout.write(
              `${created ? 'added' : 'updated'} user ${name} (${opts.role}, ${accountScope(accounts)})${created ? '' : '; its sessions ended'}\n`,
            );
          },
          { poolSize: 1 },
        );
      }),
    );
  users
    .command('disable <name>')
    .description('disable a workbench user and end its sessions')
    .action((name: string) =>
      runWithAuth(async ({ disableUser }, db) => {
        await disableUser(db, name);
        process.stdout.write(`disabled user ${name}\n`);
      }),
    );
}
