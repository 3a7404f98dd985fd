import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { DEFAULT_ACCOUNT } from '../domain/account-name.ts';
import { UsageError } from '../domain/errors.ts';
import { nonEmpty, wholeNumberArg, withNoteAndAuthor, accountOption } from './options.ts';
import { runCommand, runWithDatabase, withDatabase } from './run.ts';

/**
 * `recon matches add / undo / list / import`: manual matches from the terminal (docs/finance.md,
 * Manual matches). Whoever runs them reaches the warehouse directly, so may write a difference off.
 */

const collect = (value: string, previous: string[] = []) => [...previous, nonEmpty(value)];

function readPairsFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

function registerAdd(matches: Command): void {
  withNoteAndAuthor(
    matches
      .command('add')
      .description(
        'match provider transactions with ledger entries by hand (1:1, 1:N, N:1), then reconcile their dates',
      )
      .requiredOption('--provider <transaction_id>', 'a provider transaction id (repeat for N:1)', collect)
      .requiredOption(
        '--ledger <merchant_transaction_id>',
        'a ledger merchant transaction id (repeat for 1:N)',
        collect,
      ),
    { note: 'why they belong together', by: 'who matches' },
  )
    .addOption(accountOption('the provider account of the items (default: default)'))
    .option(
      '--write-off-cents <n>',
      'write the difference beyond the tolerance off (its absolute value)',
      wholeNumberArg(1),
    )
    .action(
      (opts: {
        provider: string[];
        ledger: string[];
        note: string;
        by: string;
        account?: string;
        writeOffCents?: number;
      }) =>
        runWithDatabase(async (handle) => {
          const { matchItems } = await import('../reconcile/manual-matches/apply.ts');
          const m = await matchItems(
            handle.db,
            {
              account: opts.account ?? DEFAULT_ACCOUNT,
              providerTransactionIds: opts.provider,
              ledgerMerchantTransactionIds: opts.ledger,
              note: opts.note,
              ...(opts.writeOffCents !== undefined ? { writeOffCents: opts.writeOffCents } : {}),
              origin: 'cli',
            },
            { name: opts.by, mayWriteOff: true },
          );
          process.stdout.write(`${JSON.stringify(m)}\n`);
        }),
    );
}

function registerUndo(matches: Command): void {
  withNoteAndAuthor(
    matches
      .command('undo')
      .description(
        'undo a manual match (kept, marked undone), then reconcile its dates: its discrepancies reopen if still found',
      )
      .argument('<match_id>', 'the match (recon matches list)', wholeNumberArg(1)),
    { note: 'why', by: 'who undoes it' },
  ).action((id: number, opts: { note: string; by: string }) =>
    runWithDatabase(async (handle) => {
      const { undoMatch } = await import('../reconcile/manual-matches/apply.ts');
      process.stdout.write(
        `${JSON.stringify(await undoMatch(handle.db, id, opts.note, { name: opts.by }))}\n`,
      );
    }),
  );
}

function registerList(matches: Command): void {
  matches
    .command('list')
    .description('manual matches, newest first, as JSON lines (undone ones too unless --active)')
    .addOption(accountOption('only this provider account'))
    .option('--active', 'only the matches that hold')
    .option('--limit <n>', 'at most this many', wholeNumberArg(1, 10_000))
    .action((opts: { account?: string; active?: boolean; limit?: number }) =>
      runWithDatabase(async (handle) => {
        const { listManualMatches } = await import('../reconcile/manual-matches/read.ts');
        const rows = await listManualMatches(handle.db, { ...opts, limit: opts.limit ?? 100 });
        for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
      }),
    );
}

function registerImport(matches: Command): void {
  withNoteAndAuthor(
    matches
      .command('import')
      .description(
        'match the pairs of a CSV file (provider transaction id,ledger merchant transaction id), all or nothing; prints what each line did',
      )
      .argument('<file>', 'the CSV of pairs; lines sharing an id form one match (1:N, N:1)'),
    { note: 'why, for every match of the file', by: 'who matches' },
  )
    .addOption(accountOption('the provider account of the items (default: default)'))
    .action((file: string, opts: { note: string; by: string; account?: string }) =>
      runCommand(async (config) => {
        const text = readPairsFile(file);
        const { importPairs, ImportRefused } = await import('../reconcile/manual-matches/import-pairs.ts');
        return withDatabase(config, async ({ db }) => {
          const report = await importPairs(db, text, {
            account: opts.account ?? DEFAULT_ACCOUNT,
            note: opts.note,
            actor: { name: opts.by, mayWriteOff: false },
          }).catch((error: unknown) => {
            if (error instanceof ImportRefused)
              process.stdout.write(`${JSON.stringify(error.report, null, 2)}\n`);
            throw error;
          });
          process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        });
      }),
    );
}

export function registerMatches(program: Command): void {
  const matches = program
    .command('matches')
    .description(
      'manual matches of provider transactions with ledger entries: add, undo, list, import a CSV of pairs',
    );
  registerAdd(matches);
  registerUndo(matches);
  registerList(matches);
  registerImport(matches);
}
