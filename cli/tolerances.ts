import type { Command } from 'commander';
import { accountOption, currencyArg, instantArg, nonEmpty, wholeNumberArg } from './options.ts';
import { runCommand, withDatabase } from './run.ts';

/**
 * `recon tolerances list / history / set / apply` and `recon rules preview`: the matching tolerances
 * and write-off limits per account and currency (docs/finance.md, "Tolerances and write-offs").
 */

const cents = wholeNumberArg(0);

function listTolerances(opts: { account?: string; json?: boolean }) {
  return runCommand(async (config) =>
    withDatabase(config, async ({ db }) => {
      const r = await db
        .selectFrom('matching_tolerances')
        .select('account')
        .distinct()
        .$if(opts.account !== undefined, (q) => q.where('account', '=', opts.account!))
        .orderBy('account')
        .execute();
      const { loadTolerances } = await import('../reconcile/tolerances/index.ts');
      const all = [];
      for (const { account } of r) {
        const t = await loadTolerances(db, account);
        all.push({ account, version: t.version, currencies: t.currencies });
      }
      if (opts.json) return void process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
      if (all.length === 0) process.stdout.write('no tolerances: every account matches exactly\n');
      for (const a of all) {
        process.stdout.write(`account ${a.account}, version ${a.version}\n`);
        for (const c of a.currencies)
          process.stdout.write(
            `  ${c.currency}: amount tolerance ${c.amountCents} cent(s), date lag ${c.dateLagBusinessDays} business day(s), write-off limit ${c.writeOffLimitCents} cent(s)\n`,
          );
      }
    }),
  );
}

function toleranceHistoryCommand(opts: { account: string; json?: boolean }) {
  return runCommand(async (config) =>
    withDatabase(config, async ({ db }) => {
      const { toleranceHistory } = await import('../reconcile/tolerances/index.ts');
      const rows = await toleranceHistory(db, opts.account);
      if (opts.json) return void process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      if (rows.length === 0)
        process.stdout.write(`account ${opts.account} never had tolerances (version 0: exact)\n`);
      for (const r of rows)
        process.stdout.write(
          `version ${r.version}  ${r.currency}  tolerance ${r.amount_tolerance_cents}  lag ${r.date_lag_business_days}  limit ${r.write_off_limit_cents}  by ${r.set_by} at ${new Date(r.set_at).toISOString()}${r.settings_id ? `  settings ${r.settings_id}` : ''}${r.note ? `  "${r.note}"` : ''}\n`,
        );
    }),
  );
}

interface SetOptions {
  account: string;
  currency: string;
  amountCents?: number;
  dateLagDays?: number;
  writeOffLimitCents?: number;
  by: string;
  note?: string;
}

function setTolerance(opts: SetOptions) {
  return runCommand(async (config) =>
    withDatabase(config, async ({ db }) => {
      const { loadTolerances, setTolerances } = await import('../reconcile/tolerances/index.ts');
      const now = (await loadTolerances(db, opts.account)).of(opts.currency);
      const version = await setTolerances(db, {
        account: opts.account,
        changes: [
          {
            currency: opts.currency,
            amountCents: opts.amountCents ?? now.amountCents,
            dateLagBusinessDays: opts.dateLagDays ?? now.dateLagBusinessDays,
            writeOffLimitCents: opts.writeOffLimitCents ?? now.writeOffLimitCents,
          },
        ],
        setBy: `cli:${opts.by}`,
        note: opts.note ?? null,
      });
      process.stdout.write(
        `account ${opts.account}: tolerances version ${version}; the next reconcile run matches the account fully with it\n`,
      );
    }),
  );
}

function applyFile(file: string, opts: { by: string }) {
  return runCommand(async (config) => {
    const proposal = await readProposal(file);
    return withDatabase(config, async ({ db }) => {
      const { applySettings } = await import('../reconcile/tolerances/apply.ts');
      const r = await applySettings(db, proposal, `cli:${opts.by}`);
      for (const [account, version] of Object.entries(r.versions))
        process.stdout.write(
          `account ${account}: tolerances version ${version} (settings ${r.settingsId})\n`,
        );
    });
  });
}

async function readProposal(file: string) {
  const { readFile } = await import('node:fs/promises');
  const { UsageError } = await import('../domain/errors.ts');
  const { parseSettingsFile } = await import('../reconcile/tolerances/settings-file.ts');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--settings ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseSettingsFile(text, file);
}

interface PreviewOptions {
  settings: string;
  json?: boolean;
  by?: string;
  limit: number;
  now?: string;
}

function previewFile(opts: PreviewOptions) {
  return runCommand(async (config) => {
    const proposal = await readProposal(opts.settings);
    return withDatabase(config, async ({ db }) => {
      const { previewSettings } = await import('../reconcile/tolerances/preview.ts');
      const { formatPreview } = await import('../reconcile/tolerances/format-preview.ts');
      const preview = await previewSettings(db, proposal, {
        by: `cli:${opts.by ?? 'unknown'}`,
        limit: opts.limit,
        ...(opts.now ? { asOf: opts.now } : {}),
        settings: { stuckPendingBusinessDays: config.followUp.stuckPendingDays },
      });
      process.stdout.write(opts.json ? `${JSON.stringify(preview, null, 2)}\n` : formatPreview(preview));
    });
  });
}

export function registerTolerances(program: Command): void {
  const tolerances = program
    .command('tolerances')
    .description(
      'matching tolerances per account and currency: amount tolerance, date lag, write-off limit (versioned; docs/finance.md)',
    );
  tolerances
    .command('list')
    .description("each account's tolerances in force, with their version")
    .addOption(accountOption('this account only'))
    .option('--json', 'as JSON')
    .action(listTolerances);
  tolerances
    .command('history')
    .description("every version of an account's tolerances, newest first, with who set them and why")
    .addOption(accountOption('the account').makeOptionMandatory())
    .option('--json', 'as JSON')
    .action(toleranceHistoryCommand);
  tolerances
    .command('set')
    .description(
      "sets one currency's tolerance of an account as its next version (figures not given keep their value)",
    )
    .addOption(accountOption('the account').makeOptionMandatory())
    .requiredOption('--currency <code>', 'the currency, e.g. CAD', currencyArg)
    .option('--amount-cents <n>', 'a difference of at most this many cents is equal', cents)
    .option('--date-lag-days <n>', 'business days added to the grace periods', cents)
    .option(
      '--write-off-limit-cents <n>',
      'a difference beyond the tolerance and at most this is written off by the run (0: none)',
      cents,
    )
    .requiredOption('--by <name>', 'who sets it (recorded)', nonEmpty)
    .option('--note <text>', 'why (recorded)', nonEmpty)
    .action(setTolerance);
  tolerances
    .command('apply')
    .description(
      'applies a settings file previewed with recon rules preview: each account it names gets its next version, recorded with who and when',
    )
    .argument('<file>', 'the settings file that was previewed (JSON)')
    .requiredOption('--by <name>', 'who applies it (recorded)', nonEmpty)
    .action(applyFile);

  program
    .command('rules')
    .description('the matching rules and their settings')
    .command('preview')
    .description(
      'matches the whole history of each account the settings file names with its tolerances, writes no discrepancy, and shows per kind and currency what would open, be written off and close, and agreement with what people decided',
    )
    .requiredOption(
      '--settings <file>',
      'the proposed settings (JSON: {"tolerances": [{account, currency, ...}]})',
    )
    .option('--json', 'print the preview as JSON')
    .option('--by <name>', 'who previews it (recorded)', nonEmpty)
    .option('--limit <n>', 'list at most this many items (counts are always whole)', wholeNumberArg(0), 200)
    .option('--now <instant>', 'judge grace periods as of this ISO-8601 instant (default: now)', instantArg)
    .action(previewFile);
}
