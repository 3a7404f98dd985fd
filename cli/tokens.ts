import { type Command, InvalidArgumentError } from 'commander';
import type { AccountName } from '../domain/account-name.ts';
import { accountsOption, wholeNumberArg } from './options.ts';
import { accountScope, parseRole, runWithAuth } from './users.ts';

function tokenId(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('a token id is a positive integer');
  return Number(value);
}

export function registerTokens(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('workbench API tokens for machines (Authorization: Bearer): create, list, revoke');
  tokens
    .command('create')
    .description('create an API token and print it once (only its hash is stored)')
    .requiredOption('--role <role>', 'viewer, operator or admin', parseRole)
    .option('--name <name>', 'what the token is for, unique; events name it token:NAME', 'api')
    .option(
      '--expires-in-days <days>',
      'the token is refused after this many days (at most 365)',
      wholeNumberArg(1, 365),
      90,
    )
    .addOption(
      accountsOption('limit the token to this provider account (repeat for more); without it: every account'),
    )
    .action(
      (opts: {
        role: 'viewer' | 'operator' | 'admin';
        name: string;
        expiresInDays: number;
        account?: AccountName[];
      }) =>
        runWithAuth(async ({ createToken }, db) => {
          const accounts = opts.account ?? [];
          const created = await createToken(db, {
            name: opts.name,
            role: opts.role,
            expiresInDays: opts.expiresInDays,
            accounts,
          });
          process.stderr.write(
            `token ${created.tokenId} (${opts.name}, ${opts.role}, ${accountScope(accounts)}, expires ${created.expiresAt}); it is shown once, store it now:\n`,
          );
          const token = created.token;
          process.stdout.write(`${token}\n`);
        }),
    );
  tokens
    .command('list')
    .description('list API tokens (ids, names, roles, never the tokens)')
    .action(() =>
      runWithAuth(async ({ listTokens }, db) => {
        for (const t of await listTokens(db))
          process.stdout.write(
            `${t.token_id}\t${t.name}\t${t.role}\t${t.accounts ? t.accounts.join(',') : 'every account'}\tcreated ${t.created_at}\t${t.revoked_at ? `revoked ${t.revoked_at}` : `expires ${t.expires_at}`}\n`,
          );
      }),
    );
  tokens
    .command('revoke')
    .argument('<id>', 'token id (recon tokens list)', tokenId)
    .description('revoke an API token by id')
    .action((id: number) =>
      runWithAuth(async ({ revokeToken }, db) => {
        await revokeToken(db, id);
        process.stdout.write(`revoked token ${id}\n`);
      }),
    );
}
