import type { Command } from 'commander';
import { wholeNumberArg } from './options.ts';
import { runCommand } from './run.ts';

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

export function registerAnalysts(program: Command): void {
  const analysts = program
    .command('analysts')
    .description(
      'analyst logins: members of recon_analyst with statement and idle-in-transaction time limits',
    );
  const withLimits = (c: Command) =>
    c
      .option('--statement-timeout <seconds>', 'longest query (default 900)', wholeNumberArg(1))
      .option(
        '--idle-in-transaction-timeout <seconds>',
        'longest idle open transaction (default 300)',
        wholeNumberArg(1),
      );
  withLimits(
    analysts
      .command('add')
      .description(
        'create the login LOGIN as a member of recon_analyst (or make an existing role one) with the time limits; the password, if any, from RECON_ANALYST_PASSWORD',
      )
      .argument('<login>', 'role name: lower-case letters, digits, _'),
  ).action((login: string, opts: LimitOptions) =>
    runCommand(async (config) => {
      const { openDatabase } = await import('../db/connect.ts');
      const { createAnalystLogin } = await import('../db/analyst-logins.ts');
      const handle = await openDatabase(config, { watch: true });
      try {
        const password = process.env.RECON_ANALYST_PASSWORD;
        const r = await createAnalystLogin(handle.db, {
          login,
          ...(password ? { password } : {}),
          limits: limitsOf(opts),
        });
        process.stdout.write(
          `${r.created ? 'created' : 'updated'} analyst login ${login}: statement_timeout ${r.limits.statementTimeoutSeconds} s, idle_in_transaction_session_timeout ${r.limits.idleInTransactionSeconds} s\n`,
        );
      } finally {
        await handle.close();
      }
    }),
  );
  withLimits(
    analysts
      .command('limits')
      .description('set the time limits on every login role that is a member of recon_analyst'),
  ).action((opts: LimitOptions) =>
    runCommand(async (config) => {
      const { openDatabase } = await import('../db/connect.ts');
      const { applyAnalystLimits } = await import('../db/analyst-logins.ts');
      const handle = await openDatabase(config, { watch: true });
      try {
        const logins = await applyAnalystLimits(handle.db, limitsOf(opts));
        process.stdout.write(
          `time limits set on ${logins.length} analyst login(s)${logins.length ? `: ${logins.join(', ')}` : ''}\n`,
        );
      } finally {
        await handle.close();
      }
    }),
  );
}
