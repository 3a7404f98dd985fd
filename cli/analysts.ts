import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import type { AccountName } from '../domain/account-name.ts';
import { accountListArg, wholeNumberArg } from './options.ts';
import type { Db } from '../db/database.ts';
import { runCommand, withDatabase } from './run.ts';

interface LimitOptions {
  statementTimeout?: number;
  idleInTransactionTimeout?: number;
}

function limitsOf(opts: LimitOptions) {
  return {
    ...(opts.statementTimeout !== undefined ? { statementTimeoutSeconds: opts.statementTimeout } : {}),
    ...(opts.idleInTransactionTimeout !== undefined
      ? { idleInTransactionSeconds: opts.idleInTransactionTimeout }
      : {}),
  };
}

/** The two time-limit options that `add` and `limits` share. */
function withLimits(c: Command): Command {
  return c
    .option('--statement-timeout <seconds>', 'longest query (default 900)', wholeNumberArg(1))
    .option(
      '--idle-in-transaction-timeout <seconds>',
      'longest idle open transaction (default 300)',
      wholeNumberArg(1),
    );
}

/** Runs a command body with db/analyst-logins.ts (loaded only then) and the warehouse open. */
function withAnalystLogins(
  config: Config,
  body: (logins: typeof import('../db/analyst-logins.ts'), db: Db) => Promise<void>,
): Promise<void> {
  return withDatabase(config, async ({ db }) => body(await import('../db/analyst-logins.ts'), db), {
    watch: true,
  });
}

/** `recon analysts add LOGIN`: the password, if any, from RECON_ANALYST_PASSWORD. */
async function addAnalystLogin(config: Config, login: string, opts: LimitOptions): Promise<void> {
  await withAnalystLogins(config, async ({ createAnalystLogin }, db) => {
    const password = config.analystPassword;
    const r = await createAnalystLogin(db, {
      login,
      ...(password ? { password } : {}),
      limits: limitsOf(opts),
    });
    process.stdout.write(
      `${r.created ? 'created' : 'updated'} analyst login ${login}: statement_timeout ${r.limits.statementTimeoutSeconds} s, idle_in_transaction_session_timeout ${r.limits.idleInTransactionSeconds} s\n`,
    );
  });
}

/** The accounts `recon analysts grant` names ('all' for --all-accounts), each one configured. */
async function grantedAccounts(opts: {
  accounts?: AccountName[];
  allAccounts?: boolean;
}): Promise<string[] | 'all'> {
  const { ConfigError } = await import('../domain/errors.ts');
  if ((opts.accounts === undefined) === (opts.allAccounts !== true)) {
    throw new ConfigError('recon analysts grant: give exactly one of --accounts A,B and --all-accounts');
  }
  if (opts.allAccounts) return 'all';
  const names = opts.accounts!;
  const { loadAccounts } = await import('../config/accounts.ts');
  const known = loadAccounts();
  const unknown = names.filter((n) => !known.byName(n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `--accounts: ${unknown.join(', ')} not in the accounts configuration (recon accounts list)`,
    );
  }
  return names;
}

/** `recon analysts grant LOGIN`: limit the login to some accounts' rows, or lift the limit. */
async function grantAnalystLogin(
  config: Config,
  login: string,
  opts: { accounts?: AccountName[]; allAccounts?: boolean },
): Promise<void> {
  const names = await grantedAccounts(opts);
  await withAnalystLogins(config, async ({ grantAnalystAccounts }, db) => {
    const r = await grantAnalystAccounts(db, login, names);
    process.stdout.write(
      r === 'all'
        ? `analyst login ${login} sees every account\n`
        : `analyst login ${login} sees accounts ${r.join(', ')} only\n`,
    );
  });
}

/** `recon analysts limits`: the time limits on every analyst login. */
async function setAnalystLimits(config: Config, opts: LimitOptions): Promise<void> {
  await withAnalystLogins(config, async ({ applyAnalystLimits }, db) => {
    const logins = await applyAnalystLimits(db, limitsOf(opts));
    process.stdout.write(
      `time limits set on ${logins.length} analyst login(s)${logins.length ? `: ${logins.join(', ')}` : ''}\n`,
    );
  });
}

export function registerAnalysts(program: Command): void {
  const analysts = program
    .command('analysts')
    .description(
      'analyst logins: members of recon_analyst with statement and idle-in-transaction time limits',
    );
  withLimits(
    analysts
      .command('add')
      .description(
        'create the login LOGIN as a member of recon_analyst (or make an existing role one) with the time limits; the password, if any, from RECON_ANALYST_PASSWORD',
      )
      .argument('<login>', 'role name: lower-case letters, digits, _'),
  ).action((login: string, opts: LimitOptions) =>
    runCommand((config) => addAnalystLogin(config, login, opts)),
  );
  analysts
    .command('grant')
    .description(
      'limit the analyst login LOGIN to the rows of some provider accounts (row-level security on every table and view it reads), or lift the limit',
    )
    .argument('<login>', 'an analyst login (recon analysts add)')
    .option('--accounts <names>', 'comma-separated account names, e.g. ca-main,us-main', accountListArg)
    .option('--all-accounts', 'lift the limit: the login sees every account')
    .action((login: string, opts: { accounts?: AccountName[]; allAccounts?: boolean }) =>
      runCommand((config) => grantAnalystLogin(config, login, opts)),
    );
  withLimits(
    analysts
      .command('limits')
      .description('set the time limits on every login role that is a member of recon_analyst'),
  ).action((opts: LimitOptions) => runCommand((config) => setAnalystLimits(config, opts)));
}
