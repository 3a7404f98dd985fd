import { type Command, Option } from 'commander';
import { DISCREPANCY_STATUSES, type DiscrepancyStatus } from '../reconcile/discrepancies/statuses.ts';
import { DISCREPANCY_KINDS } from '../reconcile/settings.ts';
import { currencyArg, wholeNumberArg, withDateRange, withNoteAndAuthor } from './options.ts';
import { runWithDatabase } from './run.ts';

interface ListOptions {
  kind?: string;
  status?: DiscrepancyStatus;
  currency?: string;
  from?: string;
  to?: string;
  limit?: number;
  json?: boolean;
}

const idArgument = wholeNumberArg(1);

/** `recon discrepancies list / show / ack`: the worklist from the terminal. */
export function registerDiscrepancies(program: Command): void {
  const discrepancies = program
    .command('discrepancies')
    .description('the worklist of recorded discrepancies: list, show one with its evidence, acknowledge');

  withDateRange(
    discrepancies
      .command('list')
      .description(
        'list discrepancies, newest business date first: a table with the currency beside every amount, or --json',
      )
      .addOption(new Option('--kind <kind>', 'only this kind').choices(DISCREPANCY_KINDS))
      .addOption(new Option('--status <status>', 'only this status').choices(DISCREPANCY_STATUSES))
      .option('--currency <code>', 'only this currency (CAD, USD)', currencyArg),
    'business dates',
    { optional: true },
  )
    .option('--limit <n>', 'at most this many rows', wholeNumberArg(1))
    .option('--json', 'print a JSON array (amounts in cents, each with its currency)')
    .action((opts: ListOptions) =>
      runWithDatabase(async (handle) => {
        const { listDiscrepancies } = await import('../reconcile/discrepancies/read.ts');
        const { formatDiscrepancyTable } = await import('../reconcile/report/format-worklist.ts');
        const { json, kind, limit, ...filter } = opts;
        const rows = await listDiscrepancies(
          handle.db,
          { ...filter, ...(kind !== undefined ? { kinds: [kind] } : {}) },
          { order: 'newest', ...(limit !== undefined ? { limit } : {}) },
        );
        process.stdout.write(json ? `${JSON.stringify(rows, null, 2)}\n` : formatDiscrepancyTable(rows));
      }),
    );

  discrepancies
    .command('show')
    .description(
      'one discrepancy: what is wrong, its evidence (provider row, ledger entry, notifications) and its history (discrepancy_events)',
    )
    .argument('<id>', 'discrepancy_id (see recon discrepancies list)', idArgument)
    .option('--json', 'print it as JSON')
    .action((id: number, opts: { json?: boolean }) =>
      runWithDatabase(async (handle) => {
        const { discrepancyDetail, terminalDetail } = await import('../reconcile/discrepancies/detail.ts');
        const { formatDiscrepancyDetail } = await import('../reconcile/report/format-worklist.ts');
        const detail = terminalDetail(await discrepancyDetail(handle.db, id));
        process.stdout.write(
          opts.json ? `${JSON.stringify(detail, null, 2)}\n` : formatDiscrepancyDetail(detail),
        );
      }),
    );

  withNoteAndAuthor(
    discrepancies
      .command('ack')
      .description(
        'acknowledge a discrepancy with a note (kept across re-runs; recorded in discrepancy_events, with any earlier acknowledgement)',
      )
      .argument('<id>', 'discrepancy_id (see recon discrepancies list)', idArgument),
    { note: 'why, what was done', by: 'who acknowledges' },
  ).action((id: number, opts: { note: string; by: string }) =>
    runWithDatabase(async (handle) => {
      const { actOnDiscrepancy } = await import('../reconcile/discrepancies/actions.ts');
      await actOnDiscrepancy(handle.db, id, { action: 'ack', note: opts.note }, { name: opts.by });
      process.stdout.write(`discrepancy ${id} acknowledged by ${opts.by}\n`);
    }),
  );
}
