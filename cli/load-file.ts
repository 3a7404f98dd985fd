import type { Readable } from 'node:stream';
import type { PoolHandle } from '../db/pool.ts';
import type { Config } from '../config/config.ts';
import type { LoadSummary } from '../domain/load-summary.ts';

type Progress = (p: { rowsRead: number; bytes: number }) => void;

/** Progress on stderr, only for a person watching a terminal. */
function progressPrinter(): Progress | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (p) => process.stderr.write(`\rread ${p.rowsRead} rows, ${(p.bytes / 1048576).toFixed(1)} MiB`);
}

/**
 * The warning of a committed load that rejected rows (docs/reference.md, "Exit codes and errors"): how
 * many, and the command that lists them. It works as printed on the embedded warehouse and on
 * DATABASE_URL alike, and as an analyst: `recon warehouse psql` on the redacted view, which analysts
 * may read (rejected_rows.raw may hold personal data). The JSON summary on stdout stays as it is.
 */
export function warnRejected(summary: Pick<LoadSummary, 'loadId' | 'rowsRejected'>): void {
  if (summary.rowsRejected === 0) return;
  process.stderr.write(
    `recon: warning: ${summary.rowsRejected} row(s) rejected by load ${summary.loadId}; list them with: recon warehouse psql -- -c "select line_number, reason, raw_redacted from rejected_rows_redacted where load_id = ${summary.loadId} order by line_number"\n`,
  );
}

/**
 * The same warning for the pulls of a backfill or a nightly run that completed with rejected rows
 * (each window within RECON_MAX_REJECTED_PER_WINDOW, or the run would have failed): a body cut short
 * by the provider leaves its last record rejected here, and the day fewer rows than it had. The
 * command lists the rejected rows of the workflows' loads of those Eastern days.
 */
export function warnRejectedInRange(
  rowsRejected: number,
  range: { readonly from: string; readonly to: string },
): void {
  if (rowsRejected === 0) return;
  process.stderr.write(
    `recon: warning: ${rowsRejected} row(s) rejected by the pulls of ${range.from}..${range.to}; list them with: recon warehouse psql -- -c "select l.load_id, l.source, l.account, r.line_number, r.reason from rejected_rows_redacted r join loads l using (load_id) where l.origin = 'workflow' and (l.window_start at time zone 'America/Toronto')::date between '${range.from}' and '${range.to}' order by l.load_id, r.line_number"\n`,
  );
}

/**
 * The body of `recon import` and `recon ledger import`: opens the file (an unreadable one fails before
 * the database is touched), loads it with origin 'file' and the configured environment, shows progress
 * on a terminal, prints the load summary as JSON on stdout (and the rejected rows' warning on
 * stderr), and closes the warehouse. More rejected rows than `maxRejected` fail the load whole.
 */
export async function loadFileAndPrint(
  config: Config,
  file: string,
  maxRejected: number | undefined,
  load: (
    handle: PoolHandle,
    request: {
      fileName: string;
      origin: 'file';
      environment: Config['environment'];
      maxRejected?: number;
      onProgress?: Progress;
    },
    input: Readable,
  ) => Promise<LoadSummary>,
): Promise<void> {
  const { openInput } = await import('../ingest/load/open-input.ts');
  // The pool without Kysely: a load writes through node-postgres (ingest/load/load-statements.ts).
  const { openPool } = await import('../db/pool.ts');
  const input = await openInput(file);
  const handle = await openPool(config, { watch: true });
  try {
    const onProgress = progressPrinter();
    const summary = await load(
      handle,
      {
        fileName: file,
        origin: 'file',
        environment: config.environment,
        ...(maxRejected !== undefined ? { maxRejected } : {}),
        ...(onProgress ? { onProgress } : {}),
      },
      input,
    );
    if (process.stderr.isTTY) process.stderr.write('\n');
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    warnRejected(summary);
  } finally {
    await handle.close();
  }
}
