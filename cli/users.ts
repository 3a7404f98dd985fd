import { type Command, InvalidArgumentError } from 'commander';
import { runCommand } from './run.ts';

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
      'add a workbench user, or set the role and password of an existing one (and enable it again)',
    )
    .requiredOption('--role <role>', 'viewer, operator or admin', parseRole)
    .requiredOption('--password-stdin', 'read the password from standard input (at least 12 characters)')
    .action((name: string, opts: { role: 'viewer' | 'operator' | 'admin' }) =>
      runCommand(async (config) => {
        const password = await readStdin();
        const { openDatabase } = await import('../db/connect.ts');
        const { addUser } = await import('../workbench/auth/accounts.ts');
        const handle = await openDatabase(config, { poolSize: 1 });
        try {
          const { created } = await addUser(handle.db, { username: name, role: opts.role, password });
          process.stdout.write(`${created ? 'added' : 'updated'} user ${name} (${opts.role})\n`);
        } finally {
          await handle.close();
        }
      }),
    );
  users
    .command('disable <name>')
    .description('disable a workbench user and end its sessions')
    .action((name: string) =>
      runCommand(async (config) => {
        const { openDatabase } = await import('../db/connect.ts');
        const { disableUser } = await import('../workbench/auth/accounts.ts');
        const handle = await openDatabase(config, { poolSize: 1 });
        try {
          await disableUser(handle.db, name);
          process.stdout.write(`disabled user ${name}\n`);
        } finally {
          await handle.close();
        }
      }),
    );
}
